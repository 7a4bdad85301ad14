"""rldk's reference suite: real TRL trainers on a tiny model with known bugs, each bug caught by the rldk capability
named for it (catalog.py), healthy runs quiet. `rldk reference run --quick` or `python -m rldk.reference run`."""
