"""TrackingConfig: what an ExperimentTracker records and where the manifest goes."""
import os
import threading
import warnings

DEFAULT_OUTPUT_DIR = "./runs"
MANIFEST_NAME = "rldk_manifest.json"

# Keyword arguments of the older rldk's TrackingConfig that mean nothing here. They are accepted (people paste the
# old README) with one warning per name per process saying what rldk does instead; any other unknown name is a typo
# and raises TypeError as usual.
LEGACY_OPTIONS = {
    "dataset_checksum_algorithm": "datasets are hashed completely (every byte, every row) with XXH3-128",
    "model_fingerprint_algorithm": "models are fingerprinted with XXH3-128 over every parameter and buffer",
    "save_model_architecture": "the architecture hash (module tree, tensor names/shapes/dtypes) is always recorded",
    "save_model_weights": "a weights hash over every tensor is always recorded; weights themselves are never saved",
    "capture_conda_env": "every installed distribution and its version is recorded (environment.packages)",
    "capture_pip_freeze": "every installed distribution and its version is recorded (environment.packages)",
    "capture_system_info": "Python, platform, torch/CUDA/cuDNN and GPU names are recorded with the environment",
    "track_numpy_seed": "set_seeds(n) seeds random, NumPy, torch and CUDA together and records n for each",
    "track_torch_seed": "set_seeds(n) seeds random, NumPy, torch and CUDA together and records n for each",
    "track_python_seed": "set_seeds(n) seeds random, NumPy, torch and CUDA together and records n for each",
    "track_cuda_seed": "set_seeds(n) seeds random, NumPy, torch and CUDA together and records n for each",
    "save_to_json": "the manifest is always one JSON file (rldk_manifest.json)",
    "save_to_yaml": "the manifest is JSON only (rldk_manifest.json); no YAML copy is written",
    "dataset_sample_size": "nothing is sampled: every byte of a dataset is hashed",
    "model_fingerprint_limit": "no size limit: every model is hashed completely",
    "tracking_timeout": "there is no timeout; hashing runs at disk/memory bandwidth",
}
_warned = set()
_warned_lock = threading.Lock()


def _warn_legacy(name):
    with _warned_lock:
        if name in _warned:
            return
        _warned.add(name)
    warnings.warn("TrackingConfig(%s=...) is ignored: %s" % (name, LEGACY_OPTIONS[name]), UserWarning, stacklevel=3)


class TrackingConfig:
    """What an ExperimentTracker records. Every section is on by default; exports are off.

    experiment_name   required; names the run folder and the exported W&B/MLflow run.
    experiment_id     default: a new UUID4 per tracker.
    output_dir        the manifest goes to <output_dir>/<experiment_name>/rldk_manifest.json (default ./runs);
                      RLDKCallback(tracker=...) puts it at <trainer output_dir>/rldk_manifest.json instead.
    manifest_path     an explicit file path for the manifest (overrides output_dir).
    enable_*_tracking sections to record; a disabled section is left out of the manifest (model tracking covers
                      tokenizers too).
    code_dir          where to look for the git repository (default: the current directory).
    hash_threads      threads for hashing dataset files (0: one per core).
    deterministic     what set_seeds(n) passes to rldk.seed.set_global_seed (torch deterministic algorithms,
                      cudnn flags, CUBLAS_WORKSPACE_CONFIG).
    save_to_wandb     also log the manifest to W&B (an artifact plus config) in wandb_project; uses the active
                      run when there is one. save_to_mlflow: log_dict of the manifest + params for the config, to
                      mlflow_tracking_uri (default: MLflow's own) under mlflow_experiment (default: MLflow's).
    tags, notes, metadata   initial tags, a note (stored as metadata["notes"]) and metadata.
    config            initial hyperparameters (the manifest's "config").
    """

    def __init__(self, experiment_name, experiment_id=None, output_dir=DEFAULT_OUTPUT_DIR, *,
                 manifest_path=None,
                 enable_dataset_tracking=True, enable_model_tracking=True, enable_environment_tracking=True,
                 enable_seed_tracking=True, enable_git_tracking=True,
                 code_dir=None, hash_threads=0, deterministic=True,
                 save_to_wandb=False, wandb_project="rldk-experiments", wandb_entity=None,
                 save_to_mlflow=False, mlflow_tracking_uri=None, mlflow_experiment=None,
                 tags=None, notes=None, metadata=None, config=None, **legacy):
        for name in legacy:
            if name not in LEGACY_OPTIONS:
                raise TypeError("TrackingConfig() got an unexpected keyword argument %r" % name)
            _warn_legacy(name)
        if not isinstance(experiment_name, str) or not experiment_name.strip():
            raise ValueError("TrackingConfig: experiment_name must be a non-empty string")
        if os.sep in experiment_name or (os.altsep and os.altsep in experiment_name) or experiment_name in (".", ".."):
            raise ValueError("TrackingConfig: experiment_name %r names a folder under output_dir; it may not contain "
                             "path separators" % experiment_name)
        self.experiment_name = experiment_name
        self.experiment_id = experiment_id
        self.output_dir = os.fspath(output_dir) if output_dir is not None else DEFAULT_OUTPUT_DIR
        self.manifest_path = os.fspath(manifest_path) if manifest_path is not None else None
        self.enable_dataset_tracking = bool(enable_dataset_tracking)
        self.enable_model_tracking = bool(enable_model_tracking)
        self.enable_environment_tracking = bool(enable_environment_tracking)
        self.enable_seed_tracking = bool(enable_seed_tracking)
        self.enable_git_tracking = bool(enable_git_tracking)
        self.code_dir = os.fspath(code_dir) if code_dir is not None else None
        self.hash_threads = int(hash_threads)
        self.deterministic = bool(deterministic)
        self.save_to_wandb = bool(save_to_wandb)
        self.wandb_project = wandb_project
        self.wandb_entity = wandb_entity
        self.save_to_mlflow = bool(save_to_mlflow)
        self.mlflow_tracking_uri = mlflow_tracking_uri
        self.mlflow_experiment = mlflow_experiment
        self.tags = [str(t) for t in (tags or [])]
        self.notes = notes
        self.metadata = dict(metadata or {})
        self.config = dict(config or {})
        self.ignored_options = sorted(legacy)

    def default_manifest_path(self):
        if self.manifest_path:
            return self.manifest_path
        return os.path.join(self.output_dir, self.experiment_name, MANIFEST_NAME)

    def __repr__(self):
        return "TrackingConfig(experiment_name=%r, output_dir=%r)" % (self.experiment_name, self.output_dir)
