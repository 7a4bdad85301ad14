"""Everything seeded; deterministic algorithms on; each shuffling DataLoader has its own seeded generator."""
import torch
from torch.utils.data import DataLoader

import rldk

SEED = 1234
rldk.seed.set_global_seed(SEED)
model = torch.nn.Linear(8, 2)
loader = DataLoader(list(range(64)), batch_size=16, shuffle=True,
                    generator=torch.Generator().manual_seed(SEED))
