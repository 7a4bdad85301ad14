"""Optional copies of the manifest in W&B and MLflow, through their own clients. Off by default; the local manifest
is always written first, and an export that fails is a warning, never a lost run."""
import re
import warnings

from .json_safe import canonical_json

MLFLOW_PARAM_VALUE_MAX = 6000  # MLflow rejects longer parameter values
MLFLOW_ARTIFACT = "rldk/rldk_manifest.json"


def provenance_summary(manifest):
    """A few flat keys that identify what the run was made of: for run tables and filters in W&B/MLflow."""
    out = {"schema": manifest["schema"], "experiment_id": manifest["experiment_id"], "status": manifest["status"]}
    git = manifest.get("git") or {}
    if git.get("available"):
        out.update({"git_commit": git.get("commit"), "git_dirty": git.get("dirty"),
                    "git_patch_hash": git.get("patch_hash")})
    for name, entry in sorted((manifest.get("datasets") or {}).items()):
        out["dataset/%s" % name] = entry["hash"]
    for name, entry in sorted((manifest.get("models") or {}).items()):
        out["model/%s/weights_hash" % name] = entry["weights_hash"]
        out["model/%s/architecture_hash" % name] = entry["architecture_hash"]
    for name, entry in sorted((manifest.get("tokenizers") or {}).items()):
        out["tokenizer/%s" % name] = entry["hash"]
    seeds = manifest.get("seeds") or {}
    if seeds.get("seed") is not None:
        out["seed"] = seeds["seed"]
    return out


def export_wandb(tracker, manifest):
    """Log the manifest file as a W&B artifact (type "rldk-manifest") and the config plus a provenance summary as
    run config, into the active run or a new one in wandb_project (finished again when rldk started it)."""
    import wandb

    cfg = tracker.config
    run = wandb.run
    own = run is None
    if own:
        run = wandb.init(project=cfg.wandb_project, entity=cfg.wandb_entity, name=cfg.experiment_name,
                         tags=manifest["tags"] or None)
    try:
        run.config.update({"rldk": provenance_summary(manifest), **manifest["config"]}, allow_val_change=True)
        artifact_name = re.sub(r"[^A-Za-z0-9._-]", "-", "rldk-manifest-%s" % cfg.experiment_name)
        artifact = wandb.Artifact(artifact_name, type="rldk-manifest", metadata=provenance_summary(manifest))
        artifact.add_file(tracker.manifest_path, name="rldk_manifest.json")
        run.log_artifact(artifact)
        return {"run_id": run.id, "artifact": artifact_name, "dir": run.dir}
    finally:
        if own:
            run.finish()


def _flatten(prefix, value, out):
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten("%s.%s" % (prefix, k) if prefix else str(k), v, out)
    else:
        out[prefix] = value if isinstance(value, str) else canonical_json(value)
    return out


def export_mlflow(tracker, manifest):
    """log_dict of the manifest (artifact rldk/rldk_manifest.json), the config as params (nested keys joined with
    "."; keys the run already has are left as they are) and the provenance summary as tags "rldk.<key>"."""
    import mlflow

    cfg = tracker.config
    if cfg.mlflow_tracking_uri:
        mlflow.set_tracking_uri(cfg.mlflow_tracking_uri)
    active = mlflow.active_run()
    own = active is None
    if own:
        if cfg.mlflow_experiment:
            mlflow.set_experiment(cfg.mlflow_experiment)
        active = mlflow.start_run(run_name=cfg.experiment_name)
    try:
        run_id = active.info.run_id
        mlflow.log_dict(manifest, MLFLOW_ARTIFACT)
        existing = mlflow.MlflowClient().get_run(run_id).data.params
        params = {k: v[:MLFLOW_PARAM_VALUE_MAX] for k, v in _flatten("", manifest["config"], {}).items()
                  if k not in existing}
        if params:
            mlflow.log_params(params)
        mlflow.set_tags({"rldk.%s" % k: "" if v is None else str(v)
                         for k, v in provenance_summary(manifest).items()})
        return {"run_id": run_id, "artifact": MLFLOW_ARTIFACT, "tracking_uri": mlflow.get_tracking_uri()}
    finally:
        if own:
            mlflow.end_run()


def export_manifest(tracker, manifest):
    """Run the exports the config asks for. Returns {"wandb"/"mlflow": details or {"error": text}}."""
    results = {}
    for enabled, name, function in ((tracker.config.save_to_wandb, "wandb", export_wandb),
                                    (tracker.config.save_to_mlflow, "mlflow", export_mlflow)):
        if not enabled:
            continue
        try:
            results[name] = function(tracker, manifest)
        except Exception as e:  # noqa: BLE001 - the local manifest is written; an export failure must not fail the run
            results[name] = {"error": "%s: %s" % (type(e).__name__, e)}
            warnings.warn("rldk.tracking: exporting the manifest to %s failed (%s: %s); it is still in %s"
                          % (name, type(e).__name__, e, tracker.manifest_path), UserWarning, stacklevel=3)
    return results
