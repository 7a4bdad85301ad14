"""A real PyTorch CPU training loop whose runs differ only because its DataLoader shuffle is not seeded.

    python examples/trainers/torch_shuffle.py --steps 40                 # two runs differ from step 1
    python examples/trainers/torch_shuffle.py --steps 40 --seed-data 0   # the fix: identical runs
    python examples/trainers/torch_shuffle.py --steps 40 --fix           # same, data seed = --seed

The case-study bug. Everything a careful engineer seeds is seeded: the synthetic dataset comes from its own
generator, the model's initial weights from torch.manual_seed(--seed), and torch's deterministic algorithms are on.
Only the DataLoader's shuffle order is not: its sampler gets a torch.Generator seeded from OS entropy
(Generator.seed()), which is what happens when a data pipeline builds "a fresh random order per run". The first batch
already differs, so loss, gradient norm and everything after differ from step 1 on, although each run on its own
looks perfectly healthy. --seed-data N (or --fix) seeds that generator and two runs become bit-identical.

Every optimizer step writes one JSON line to --out, else $RLDK_METRICS_PATH, else stdout:
{"step", "loss", "grad_norm", "learning_rate", "accuracy", "data/batch_hash", "epoch"}; data/batch_hash is a
fingerprint of the sample indices in the batch, so a comparison can show that the data order diverged first.
A few dozen steps take well under 10 s on one CPU core (torch import included).

Exit status: 0, or 2 on bad arguments.
"""
import argparse
import json
import os
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

DATASET_SIZE = 1024
FEATURES = 16
CLASSES = 4
HIDDEN = 32
DATASET_SEED = 1234  # the data itself is fixed; only its order is in question


def make_dataset():
    """A learnable 4-class problem: labels from a fixed random linear map of Gaussian features."""
    generator = torch.Generator().manual_seed(DATASET_SEED)
    features = torch.randn(DATASET_SIZE, FEATURES, generator=generator)
    projection = torch.randn(FEATURES, CLASSES, generator=generator)
    labels = (features @ projection).argmax(dim=1)
    return TensorDataset(features, labels, torch.arange(DATASET_SIZE))


def make_loader(dataset, batch_size, data_seed):
    generator = torch.Generator()
    if data_seed is None:
        generator.seed()  # the bug: a new order on every run, from OS entropy
    else:
        generator.manual_seed(data_seed)
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, generator=generator, drop_last=True)


def batch_hash(indices):
    """Order-sensitive fingerprint of a batch's sample indices, exact in a float64 (below 2**31)."""
    value = 0
    for index in indices.tolist():
        value = (value * 1000003 + index + 1) % 2147483647
    return value


def grad_norm(model):
    squares = [p.grad.detach().pow(2).sum() for p in model.parameters() if p.grad is not None]
    return float(torch.stack(squares).sum().sqrt())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0, help="seed of the model's initial weights")
    parser.add_argument("--seed-data", type=int, default=None, help="seed of the shuffle order (the fix)")
    parser.add_argument("--fix", action="store_true", help="seed the shuffle order with --seed")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--out", help="metrics JSONL path (default: $RLDK_METRICS_PATH, else stdout)")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.batch_size < 1 or args.batch_size > DATASET_SIZE:
        parser.error("--steps must be >= 1 and --batch-size between 1 and %d" % DATASET_SIZE)
    data_seed = args.seed if args.fix and args.seed_data is None else args.seed_data

    torch.set_num_threads(1)  # one thread: identical reductions whatever the machine's core count
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(args.seed)
    model = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    loader = make_loader(make_dataset(), args.batch_size, data_seed)

    path = args.out or os.environ.get("RLDK_METRICS_PATH")
    out = open(path, "w", encoding="utf-8") if path else sys.stdout
    try:
        step, epoch = 0, 0
        while step < args.steps:
            for features, labels, indices in loader:
                step += 1
                optimizer.zero_grad()
                logits = model(features)
                loss = loss_fn(logits, labels)
                loss.backward()
                norm = grad_norm(model)
                optimizer.step()
                record = {
                    "step": step,
                    "epoch": epoch,
                    "loss": float(loss.detach()),
                    "grad_norm": norm,
                    "learning_rate": args.lr,
                    "accuracy": float((logits.argmax(dim=1) == labels).float().mean()),
                    "data/batch_hash": batch_hash(indices),
                }
                out.write(json.dumps(record, sort_keys=True) + "\n")
                out.flush()
                if step >= args.steps:
                    break
            epoch += 1
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
