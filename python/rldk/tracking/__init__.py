"""Experiment tracking: one JSON manifest per run (rldk.run-manifest/v1) recording what the run was made of.

    from rldk.tracking import ExperimentTracker, TrackingConfig
    with ExperimentTracker(TrackingConfig(experiment_name="ppo_run")) as tracker:
        tracker.track_dataset("data/train.jsonl", "train")   # every byte hashed (XXH3-128, native)
        tracker.track_model(model, "policy")                 # architecture + every parameter and buffer
        tracker.set_seeds(42)
        train()
    # ./runs/ppo_run/rldk_manifest.json; compare two runs with `rldk track diff A B`

The environment (every installed package, torch/CUDA, reproducibility env vars), git state (commit, branch and the
full uncommitted patch) and timings are captured by start_experiment. See docs/tracking.md.
"""
from .config import LEGACY_OPTIONS, MANIFEST_NAME, TrackingConfig
from .json_safe import json_safe
from .tracker import SCHEMA, ExperimentTracker, load_manifest, write_manifest

__all__ = ["ExperimentTracker", "LEGACY_OPTIONS", "MANIFEST_NAME", "SCHEMA", "TrackingConfig", "json_safe",
           "load_manifest", "write_manifest"]
