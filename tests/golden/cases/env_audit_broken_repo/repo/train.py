import random

import numpy as np
import torch
from torch.utils.data import DataLoader

from pkg.data import build_dataset

torch.backends.cudnn.benchmark = True  # "faster convolutions"
model = torch.nn.Linear(8, 2)
loader = DataLoader(build_dataset(), batch_size=16, shuffle=True, num_workers=2)
for batch in loader:
    if random.random() < 0.1:
        continue
