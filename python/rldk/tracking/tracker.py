"""ExperimentTracker: records what a training run was made of into one JSON manifest (rldk.run-manifest/v1)."""
import datetime
import os
import sys
import tempfile
import time
import uuid
import warnings

from . import environment as _environment
from . import fingerprints
from .config import MANIFEST_NAME, TrackingConfig
from .git_state import capture_git
from .json_safe import dumps_manifest, json_safe

SCHEMA = "rldk.run-manifest/v1"
STATUSES = ("running", "finished", "failed")


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def _is_main_process():
    """Rank 0 (or no distributed launcher): the only process that writes the manifest and hashes models/data."""
    rank = os.environ.get("RANK", "")  # global rank (torchrun, accelerate, deepspeed)
    if rank:
        return rank == "0"
    return os.environ.get("LOCAL_RANK", "") in ("", "0")


def write_manifest(path, manifest):
    """Write atomically: a temporary file in the same folder, fsync, then rename over `path`. A reader (or a crash)
    sees the old manifest or the new one, never half of one."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    text = dumps_manifest(manifest)
    fd, tmp = tempfile.mkstemp(prefix=".rldk_manifest.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


class ExperimentTracker:
    """Records a run's environment, code, seeds, config, datasets, models and tokenizers into one manifest.

        tracker = ExperimentTracker(TrackingConfig(experiment_name="ppo_run"))
        tracker.start_experiment()
        tracker.track_dataset("data/train.jsonl", "train")
        tracker.track_model(model, "policy")
        tracker.set_seeds(42)
        path = tracker.finish_experiment()          # ./runs/ppo_run/rldk_manifest.json

    or ``with ExperimentTracker(cfg) as tracker: ...`` (an exception marks the manifest "failed" and is re-raised).
    In a distributed job only rank 0 records and writes; set_seeds seeds every rank.
    """

    def __init__(self, config=None, **kwargs):
        if config is None:
            config = TrackingConfig(**kwargs)
        elif kwargs:
            raise TypeError("ExperimentTracker: pass a TrackingConfig or keyword arguments, not both")
        if not isinstance(config, TrackingConfig):
            raise TypeError("ExperimentTracker: config must be a TrackingConfig, got %s" % type(config).__name__)
        self.config = config
        self.experiment_id = config.experiment_id or str(uuid.uuid4())
        self.manifest_path = os.path.abspath(config.default_manifest_path())
        self.main_process = _is_main_process()
        self.status = None  # None before start_experiment, then one of STATUSES
        self.exports = {}
        self._started_at = None
        self._finished_at = None
        self._t0 = None
        self._duration = None
        self._timings = {}
        self._environment = None
        self._git = None
        self._seeds = None
        self._config = json_safe(dict(config.config))
        self._metadata = json_safe(dict(config.metadata))
        if config.notes is not None:
            self._metadata["notes"] = json_safe(config.notes)
        self._tags = list(config.tags)
        self._datasets = {}
        self._models = {}
        self._tokenizers = {}
        self._written_path = None

    # ------------------------------------------------------------------------------------------------ lifecycle
    @property
    def started(self):
        return self.status is not None

    @property
    def finished(self):
        return self.status in ("finished", "failed")

    def start_experiment(self):
        """Capture the environment and git state, and write the manifest with status "running". Returns its path.
        Calling it again does nothing."""
        if self.started:
            return self.manifest_path
        self.status = "running"
        self._started_at = _now()
        self._t0 = time.monotonic()
        if not self.main_process:
            return self.manifest_path
        if self.config.enable_environment_tracking:
            t = time.monotonic()
            self._environment = _environment.capture_environment()
            self._timings["environment_s"] = time.monotonic() - t
        if self.config.enable_git_tracking:
            t = time.monotonic()
            self._git = capture_git(self.config.code_dir, _hash_bytes)
            self._timings["git_s"] = time.monotonic() - t
        self._write()
        return self.manifest_path

    def finish_experiment(self, status="finished"):
        """Write the final manifest (and export it when asked). Returns the manifest's path. Calling it again
        returns the same path without rewriting."""
        if status not in ("finished", "failed"):
            raise ValueError("finish_experiment: status must be 'finished' or 'failed', got %r" % (status,))
        if self.finished:
            return self.manifest_path
        if not self.started:
            self.start_experiment()
        self.status = status
        self._finished_at = _now()
        self._duration = time.monotonic() - self._t0
        if not self.main_process:
            return self.manifest_path
        if self._environment is not None:
            _environment.refresh_runtime_settings(self._environment)
        self._write()
        if self.config.save_to_wandb or self.config.save_to_mlflow:
            from .export import export_manifest
            self.exports = export_manifest(self, self.manifest())
        return self.manifest_path

    def __enter__(self):
        self.start_experiment()
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and not self.finished:
            self._metadata["error"] = "%s: %s" % (exc_type.__name__, exc)
            self.finish_experiment(status="failed")
        else:
            self.finish_experiment()
        return False

    # ------------------------------------------------------------------------------------------------ recording
    def track_dataset(self, data, name, metadata=None):
        """Hash a dataset completely and record it under `name`. `data`: a path or list of paths (files, folders),
        an HF datasets.Dataset (a DatasetDict records one entry per split, "<name>:<split>"), a pyarrow Table,
        a pandas DataFrame, a NumPy array or torch tensor, or a list/dict of plain Python values. Returns the entry
        (None when dataset tracking is off or on a non-zero rank)."""
        if not self.config.enable_dataset_tracking or not self.main_process:
            return None
        if type(data).__name__ == "DatasetDict" and (type(data).__module__ or "").startswith("datasets"):
            return {split: self.track_dataset(data[split], "%s:%s" % (name, split), metadata) for split in data}
        t = time.monotonic()
        entry = fingerprints.fingerprint_dataset(data, threads=self.config.hash_threads)
        entry["metadata"] = json_safe(dict(metadata or {}))
        self._datasets[str(name)] = entry
        self._timings.setdefault("hashing_s", {})["datasets/%s" % name] = time.monotonic() - t
        return entry

    def track_model(self, model, name, metadata=None):
        """Fingerprint a torch model (architecture hash, weights hash over every parameter and buffer, one hash per
        tensor) under `name`. Returns the entry (None when model tracking is off or on a non-zero rank)."""
        if not self.config.enable_model_tracking or not self.main_process:
            return None
        t = time.monotonic()
        entry = fingerprints.fingerprint_model(model)
        entry["metadata"] = json_safe(dict(metadata or {}))
        self._models[str(name)] = entry
        self._timings.setdefault("hashing_s", {})["models/%s" % name] = time.monotonic() - t
        return entry

    def track_tokenizer(self, tokenizer, name, metadata=None):
        """Record a tokenizer's class, vocabulary size and a hash of its vocabulary, merges and special tokens."""
        if not self.config.enable_model_tracking or not self.main_process:
            return None
        entry = fingerprints.fingerprint_tokenizer(tokenizer)
        if metadata:
            entry["metadata"] = json_safe(dict(metadata))
        self._tokenizers[str(name)] = entry
        return entry

    def set_seeds(self, seed, deterministic=None):
        """Seed random, NumPy, torch and every CUDA device with `seed` (rldk.seed.set_global_seed) and record it.
        deterministic: default TrackingConfig.deterministic (True): torch deterministic algorithms and cudnn flags.
        Returns the seed used (taken modulo 2**32, as NumPy requires)."""
        from .. import seed as _seed

        deterministic = self.config.deterministic if deterministic is None else bool(deterministic)
        report = _seed.set_global_seed(seed, deterministic=deterministic)
        used = int(report["seed"])
        seeded = list(report["seeded"])
        self._seeds = {
            "seed": used,
            "python": used,
            "numpy": used if "numpy" in seeded else None,
            "torch": used if "torch" in seeded else None,
            "cuda": used if "torch.cuda" in seeded else None,
            "deterministic": deterministic,
            "set_by_rldk": True,
            "seeded": seeded,
            "notes": list(report["notes"]),
        }
        if seed != used:
            self._seeds["requested"] = json_safe(seed)
        return used

    def add_metadata(self, key, value):
        self._metadata[str(key)] = json_safe(value)

    def add_tag(self, tag):
        tag = str(tag)
        if tag not in self._tags:
            self._tags.append(tag)

    def set_config(self, config):
        """Record hyperparameters (merged into what is there; a key set again takes the new value)."""
        if not isinstance(config, dict):
            to_dict = getattr(config, "to_dict", None)
            config = to_dict() if callable(to_dict) else vars(config)
        self._config.update(json_safe(dict(config)))

    set_hyperparameters = set_config

    @property
    def hyperparameters(self):
        """The config recorded so far (a copy)."""
        return dict(self._config)

    @property
    def datasets(self):
        return dict(self._datasets)

    @property
    def models(self):
        return dict(self._models)

    @property
    def tokenizers(self):
        return dict(self._tokenizers)

    def use_manifest_path(self, path):
        """Write the manifest to `path` from now on (RLDKCallback points it into the trainer's output_dir): a .json
        file, or a folder to hold rldk_manifest.json. A "running" manifest this tracker already wrote is moved."""
        path = os.path.abspath(os.fspath(path))
        if os.path.isdir(path) or not path.endswith(".json"):  # a folder (existing or to be made)
            path = os.path.join(path, MANIFEST_NAME)
        old, self.manifest_path = self._written_path, path
        if old and old != path and os.path.exists(old):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.replace(old, path)
            self._written_path = path
            try:
                os.rmdir(os.path.dirname(old))  # the run folder start_experiment made, if nothing else is in it
            except OSError:
                pass
        return path

    # ------------------------------------------------------------------------------------------------ output
    def _seed_section(self):
        if self._seeds is not None:
            return dict(self._seeds)
        # set_seeds was not called: what can be read back. torch keeps the seed it was last seeded with (a trainer's
        # set_seed(args.seed) shows here); Python's and NumPy's cannot be recovered from their states.
        torch = sys.modules.get("torch")
        return {
            "seed": None, "python": None, "numpy": None,
            "torch": int(torch.initial_seed()) if torch is not None else None,
            "cuda": None,
            "deterministic": bool(torch.are_deterministic_algorithms_enabled()) if torch is not None else False,
            "set_by_rldk": False,
        }

    def manifest(self):
        """The manifest as a dict (what finish_experiment writes)."""
        cfg = self.config
        timings = dict(self._timings)
        if self._t0 is not None:
            timings["duration_s"] = self._duration if self._duration is not None else time.monotonic() - self._t0
        else:
            timings["duration_s"] = 0.0
        m = {
            "schema": SCHEMA,
            "experiment_name": cfg.experiment_name,
            "experiment_id": self.experiment_id,
            "status": self.status or "running",
            "tags": list(self._tags),
            "started_at": self._started_at,
            "finished_at": self._finished_at,
            "timings": json_safe(timings),
            "config": dict(self._config),
            "metadata": dict(self._metadata),
        }
        if cfg.enable_environment_tracking:
            m["environment"] = self._environment if self._environment is not None \
                else _environment.capture_environment()
        if cfg.enable_git_tracking:
            m["git"] = self._git if self._git is not None else capture_git(cfg.code_dir, _hash_bytes)
        if cfg.enable_seed_tracking:
            m["seeds"] = self._seed_section()
        if cfg.enable_dataset_tracking:
            m["datasets"] = dict(self._datasets)
        if cfg.enable_model_tracking:
            m["models"] = dict(self._models)
            m["tokenizers"] = dict(self._tokenizers)
        return m

    def _write(self):
        write_manifest(self.manifest_path, self.manifest())
        self._written_path = self.manifest_path

    def __repr__(self):
        return "ExperimentTracker(%r, status=%s, manifest=%s)" % (self.config.experiment_name, self.status,
                                                                  self.manifest_path)


def _hash_bytes(data):
    from .. import provenance
    return provenance.hash_bytes(data)


def load_manifest(path):
    """Read a run manifest (a file, or a folder holding rldk_manifest.json)."""
    import json

    if os.path.isdir(path):
        path = os.path.join(path, MANIFEST_NAME)
    with open(path, encoding="utf-8") as f:
        manifest = json.load(f)
    if manifest.get("schema") != SCHEMA:
        warnings.warn("%s: schema is %r, not %r" % (path, manifest.get("schema"), SCHEMA), UserWarning, stacklevel=2)
    return manifest
