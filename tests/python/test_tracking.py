"""rldk.tracking: one run manifest (rldk.run-manifest/v1) per run, from a real torch loop and a real TRL trainer;
`rldk track diff` names exactly the one thing that changed between two runs (a byte of a 100 MB dataset, a line of
uncommitted code, a package version); every fingerprint changes with any single byte or value and not otherwise.
Nothing is downloaded; W&B runs offline, MLflow into a local file store."""
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

import tiny_models  # noqa: F401  (offline switches before transformers/wandb are imported)
from conftest import ROOT, write
from test_cli import rldk_binary

torch = pytest.importorskip("torch")

import rldk  # noqa: E402
from rldk.tracking import SCHEMA, ExperimentTracker, TrackingConfig, json_safe, load_manifest  # noqa: E402
from rldk.tracking import config as tracking_config  # noqa: E402
from rldk.tracking.environment import recorded_env_vars  # noqa: E402
from rldk.tracking.fingerprints import fingerprint_dataset, fingerprint_model, fingerprint_tokenizer  # noqa: E402


@pytest.fixture(autouse=True)
def restored_determinism(monkeypatch):
    """set_seeds(n) makes torch deterministic process-wide; put the flags back for the other tests."""
    monkeypatch.setenv("RLDK_SILENCE_SEED_WARNINGS", "1")
    saved = (torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.deterministic,
             torch.backends.cudnn.benchmark, os.environ.get("CUBLAS_WORKSPACE_CONFIG"))
    yield
    torch.use_deterministic_algorithms(saved[0])
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = saved[1], saved[2]
    if saved[3] is None:
        os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)


def manifest_schema():
    with open(ROOT / "docs" / "schemas" / "rldk.run-manifest.v1.schema.json") as f:
        return json.load(f)


def validate(manifest):
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(manifest, manifest_schema())


def read(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# ------------------------------------------------------------------------------------------------ 1. real runs
def test_plain_torch_training_run_records_a_manifest(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secret_value")  # never recorded
    monkeypatch.setenv("NCCL_DEBUG", "INFO")
    tokenizer = tiny_models.make_tokenizer()
    model = tiny_models.make_model(tokenizer)
    data = tiny_models.lm_dataset(tokenizer)
    cfg = TrackingConfig(experiment_name="torch_loop", output_dir=tmp_path / "runs", code_dir=str(ROOT),
                         tags=["ppo"], notes="a tiny loop", config={"learning_rate": 1e-2, "steps": 3})
    with ExperimentTracker(cfg) as tracker:
        running = read(tmp_path / "runs" / "torch_loop" / "rldk_manifest.json")
        assert running["status"] == "running" and running["finished_at"] is None
        assert tracker.set_seeds(7, deterministic=False) == 7
        tracker.track_dataset(data, "train", metadata={"source": "tiny_models.lm_dataset"})
        tracker.track_model(model, "policy")
        tracker.track_tokenizer(tokenizer, "tokenizer")
        tracker.add_metadata("batch_size", np.int64(4))
        tracker.add_metadata("ratio", float("nan"))
        tracker.add_tag("tiny")
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
        batch = {k: torch.tensor(data[k][:4]) for k in ("input_ids", "attention_mask", "labels")}
        for _ in range(3):
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        tracker.track_model(model, "policy_final")
    path = tmp_path / "runs" / "torch_loop" / "rldk_manifest.json"
    assert tracker.manifest_path == str(path)
    text = path.read_text()
    m = json.loads(text)
    validate(m)
    assert text == json.dumps(m, sort_keys=True, indent=2, ensure_ascii=False) + "\n"  # sorted keys, indent 2
    assert m["schema"] == SCHEMA and m["status"] == "finished" and m["experiment_name"] == "torch_loop"
    assert m["tags"] == ["ppo", "tiny"]
    assert m["timings"]["duration_s"] >= 0 and m["started_at"] <= m["finished_at"]
    assert m["config"] == {"learning_rate": 1e-2, "steps": 3}
    assert m["metadata"] == {"notes": "a tiny loop", "batch_size": 4, "ratio": "NaN"}
    assert m["seeds"] == {"seed": 7, "python": 7, "numpy": 7, "torch": 7, "cuda": None, "deterministic": False,
                          "set_by_rldk": True, "seeded": m["seeds"]["seeded"], "notes": m["seeds"]["notes"]}

    env = m["environment"]
    assert env["packages"]["torch"] == torch.__version__ and env["packages"]["numpy"] == np.__version__
    assert env["python"]["executable"] == sys.executable
    assert env["frameworks"]["torch"]["version"] == torch.__version__
    assert env["frameworks"]["torch"]["num_threads"] == torch.get_num_threads()
    assert env["env_vars"]["NCCL_DEBUG"] == "INFO" and env["env_vars"]["TOKENIZERS_PARALLELISM"] == "false"
    assert "HF_TOKEN" not in env["env_vars"] and "hf_secret_value" not in text

    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    assert m["git"]["available"] and m["git"]["commit"] == head and m["git"]["root"] == str(ROOT)
    assert m["git"]["patch_hash"] == rldk.provenance.hash_bytes(m["git"]["patch"].encode())

    train = m["datasets"]["train"]
    assert train["kind"] == "hf_dataset" and train["rows"] == 16 and train["metadata"]["source"]
    assert [c["name"] for c in train["columns"]] == ["input_ids", "attention_mask", "labels"]
    before, after = m["models"]["policy"], m["models"]["policy_final"]
    assert before["architecture_hash"] == after["architecture_hash"]
    assert before["weights_hash"] != after["weights_hash"]  # three SGD steps moved the weights
    names = [t["name"] for t in before["tensors"] if t["role"] == "param"]
    assert names == [n for n, _ in model.named_parameters()]
    assert before["parameters"] == before["trainable_parameters"] == sum(p.numel() for p in model.parameters())
    assert m["tokenizers"]["tokenizer"]["vocab_size"] == len(tokenizer)
    assert load_manifest(path.parent) == m


def test_trl_callback_writes_the_manifest_into_the_trainer_output_dir(tmp_path, monkeypatch):
    pytest.importorskip("trl")
    from rldk.integrations.trl import RLDKCallback
    from test_trl_callback import grpo_trainer

    monkeypatch.chdir(tmp_path)
    tracker = ExperimentTracker(TrackingConfig(experiment_name="grpo", code_dir=str(ROOT)))
    tracker.set_config({"learning_rate": "mine"})  # the script's own value wins over the trainer's
    callback = RLDKCallback(tracker=tracker)
    trainer = grpo_trainer(tmp_path, callback, max_steps=2)
    initial = fingerprint_model(trainer.model)
    trainer.train()

    out = tmp_path / "out"
    path = out / "rldk_manifest.json"
    assert tracker.manifest_path == str(path) and path.is_file()
    assert (out / "rldk" / "metrics.jsonl").is_file()  # the callback's metrics, in the same output dir
    assert not (tmp_path / "runs").exists()  # nothing written at the default place
    m = read(path)
    validate(m)
    assert m["status"] == "finished" and m["metadata"]["trainer_args_class"] == "GRPOConfig"
    assert m["config"]["learning_rate"] == "mine" and m["config"]["max_steps"] == 2
    assert m["config"]["output_dir"] == str(out) and m["config"]["num_generations"] == 2
    # The model as it was when training began, every tensor; the trainer seeded torch with args.seed.
    assert m["models"]["model"]["weights_hash"] == initial["weights_hash"]
    assert m["models"]["model"]["weights_hash"] != fingerprint_model(trainer.model)["weights_hash"]
    assert m["tokenizers"]["tokenizer"]["hash"] == fingerprint_tokenizer(trainer.processing_class)["hash"]
    assert m["seeds"]["torch"] == 0 and m["seeds"]["set_by_rldk"] is False
    assert m["environment"]["packages"]["trl"] and m["git"]["available"]


def test_a_run_rldk_stops_by_raising_leaves_a_failed_manifest(tmp_path):
    pytest.importorskip("trl")
    from transformers import TrainerControl, TrainerState, TrainingArguments

    from rldk.integrations import TrainingStopped
    from rldk.integrations.trl import RLDKCallback

    tracker = ExperimentTracker(TrackingConfig(experiment_name="stopped", enable_git_tracking=False))
    callback = RLDKCallback(preset=None, rules_yaml="rules:\n  - {id: kl_high, metric: policy/kl, condition: value > 1,"
                                                    " actions: [stop]}\n", raise_on_stop="always", tracker=tracker)
    args = TrainingArguments(output_dir=str(tmp_path / "out"), report_to="none", use_cpu=True, learning_rate=3e-6)
    state, control = TrainerState(), TrainerControl()
    model = torch.nn.Linear(3, 2)
    callback.on_train_begin(args, state, control, model=model)
    assert read(tmp_path / "out" / "rldk_manifest.json")["status"] == "running"
    state.global_step = 1
    with pytest.raises(TrainingStopped):
        callback.on_log(args, state, control, logs={"kl": 5.0})
    m = read(tmp_path / "out" / "rldk_manifest.json")
    validate(m)
    assert m["status"] == "failed" and "kl_high" in m["metadata"]["error"]
    assert m["config"]["learning_rate"] == 3e-6 and m["metadata"]["trainer_args_class"] == "TrainingArguments"
    assert m["models"]["model"]["weights_hash"] == fingerprint_model(model)["weights_hash"]
    assert "tokenizers" in m and m["tokenizers"] == {}


def test_exception_in_the_with_block_writes_a_failed_manifest(tmp_path):
    cfg = TrackingConfig(experiment_name="crash", output_dir=tmp_path, enable_git_tracking=False)
    with pytest.raises(RuntimeError, match="boom"):
        with ExperimentTracker(cfg) as tracker:
            tracker.track_dataset([{"prompt": "a"}, {"prompt": "b"}], "prompts")
            raise RuntimeError("boom")
    m = read(tmp_path / "crash" / "rldk_manifest.json")
    validate(m)
    assert m["status"] == "failed" and m["metadata"]["error"] == "RuntimeError: boom" and m["finished_at"]
    assert m["datasets"]["prompts"]["kind"] == "python" and m["datasets"]["prompts"]["rows"] == 2
    assert "git" not in m  # a disabled section is left out, not empty
    assert tracker.finish_experiment() == str(tmp_path / "crash" / "rldk_manifest.json")  # idempotent


def test_disabled_sections_are_omitted_and_tracking_calls_do_nothing(tmp_path):
    cfg = TrackingConfig(experiment_name="bare", output_dir=tmp_path, enable_dataset_tracking=False,
                         enable_model_tracking=False, enable_environment_tracking=False, enable_seed_tracking=False,
                         enable_git_tracking=False)
    tracker = ExperimentTracker(cfg)
    tracker.start_experiment()
    assert tracker.track_dataset(np.arange(3), "x") is None and tracker.track_model(torch.nn.Linear(1, 1), "m") is None
    m = read(tracker.finish_experiment())
    validate(m)
    for section in ("environment", "git", "seeds", "datasets", "models", "tokenizers"):
        assert section not in m


def test_a_started_tracker_moves_its_manifest_when_pointed_elsewhere(tmp_path):
    cfg = TrackingConfig(experiment_name="moved", output_dir=tmp_path / "runs", enable_git_tracking=False,
                         enable_environment_tracking=False)
    tracker = ExperimentTracker(cfg)
    first = tracker.start_experiment()
    assert os.path.isfile(first)
    tracker.use_manifest_path(tmp_path / "out")  # a folder: rldk_manifest.json inside it
    assert not os.path.exists(first) and not (tmp_path / "runs" / "moved").exists()
    assert read(tmp_path / "out" / "rldk_manifest.json")["status"] == "running"
    assert tracker.finish_experiment() == str(tmp_path / "out" / "rldk_manifest.json")


# ------------------------------------------------------------------------------------------------ seed API
def test_old_readme_options_warn_once_and_typos_raise():
    tracking_config._warned.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        TrackingConfig(experiment_name="x", dataset_checksum_algorithm="sha256", save_to_yaml=True,
                       capture_pip_freeze=True, track_cuda_seed=True)
        TrackingConfig(experiment_name="y", dataset_checksum_algorithm="sha256")
    messages = [str(w.message) for w in caught]
    assert len(messages) == 4  # once per name per process
    (checksum,) = [t for t in messages if "dataset_checksum_algorithm" in t]
    assert "every byte" in checksum and "XXH3-128" in checksum
    with pytest.raises(TypeError, match="enable_dataset_trackin"):
        TrackingConfig(experiment_name="x", enable_dataset_trackin=True)
    with pytest.raises(ValueError, match="path separators"):
        TrackingConfig(experiment_name="a/b")
    cfg = TrackingConfig(experiment_name="x", output_dir=pathlib.Path("somewhere"))
    assert cfg.save_to_wandb is False and cfg.save_to_mlflow is False
    assert cfg.default_manifest_path() == os.path.join("somewhere", "x", "rldk_manifest.json")


def test_env_vars_are_an_allowlist_without_secrets():
    env = {"CUDA_VISIBLE_DEVICES": "0,1", "NCCL_P2P_DISABLE": "1", "OMP_NUM_THREADS": "4", "PYTHONHASHSEED": "0",
           "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "HF_TOKEN": "x", "HUGGING_FACE_HUB_TOKEN": "x",
           "WANDB_API_KEY": "x", "AWS_SECRET_ACCESS_KEY": "x", "HF_ENDPOINT": "https://user:pw@hub.example/",
           "TORCH_HOME_PASSWORD": "x", "HOME": "/root", "PATH": "/bin", "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
           "TRANSFORMERS_CACHE": "/c", "MY_TOKEN": "x"}
    assert recorded_env_vars(env) == {
        "CUDA_VISIBLE_DEVICES": "0,1", "NCCL_P2P_DISABLE": "1", "OMP_NUM_THREADS": "4", "PYTHONHASHSEED": "0",
        "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "https://***@hub.example/",
        "CUBLAS_WORKSPACE_CONFIG": ":4096:8", "TRANSFORMERS_CACHE": "/c"}


def test_json_safe_is_deterministic_and_strict():
    class Kind:
        pass

    value = {"a": np.float32(0.5), "b": (1, 2), "c": pathlib.Path("/x"), 3: float("inf"), "d": {2, 1},
             "e": np.arange(3), "f": torch.float16, "g": float("-inf"), "h": Kind(), "i": b"\x01\xff",
             "j": np.bool_(True), "k": torch.tensor(2.5)}
    out = json_safe(value)
    assert out == {"a": 0.5, "b": [1, 2], "c": "/x", "3": "Infinity", "d": [1, 2], "e": [0, 1, 2],
                   "f": "torch.float16", "g": "-Infinity", "h": out["h"], "i": "hex:01ff", "j": True, "k": 2.5}
    assert " at 0x" not in out["h"] and out["h"] == json_safe(Kind())  # no memory address
    json.dumps(out, allow_nan=False)


def test_git_state_outside_a_repository_or_without_git(tmp_path, monkeypatch):
    cfg = TrackingConfig(experiment_name="nogit", output_dir=tmp_path / "runs", code_dir=str(tmp_path),
                         enable_environment_tracking=False)
    m = read(ExperimentTracker(cfg).finish_experiment())
    assert m["git"]["available"] is False and "not a git repository" in m["git"]["error"]
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    m = read(ExperimentTracker(cfg).finish_experiment())
    assert m["git"] == {"available": False, "error": "git is not installed (not on PATH)",
                        "code_dir": str(tmp_path)}


def test_git_patch_has_staged_unstaged_and_binary_changes(tmp_path):
    repo = make_repo(tmp_path / "repo")
    write(repo / "train.py", "LR = 2e-5\n")
    write(repo / "blob.bin", b"\x00\x01\x02", mode="wb")
    subprocess.run(["git", "add", "blob.bin"], cwd=repo, check=True)
    write(repo / "notes.txt", "untracked\n")
    cfg = TrackingConfig(experiment_name="g", output_dir=tmp_path / "runs", code_dir=str(repo / "sub"),
                         enable_environment_tracking=False)
    (repo / "sub").mkdir()
    g = read(ExperimentTracker(cfg).finish_experiment())["git"]
    assert g["root"] == str(repo) and g["branch"] == "main" and g["dirty"] is True
    assert "-LR = 1e-5\n+LR = 2e-5\n" in g["patch"]
    assert "Binary files /dev/null and b/blob.bin differ" in g["patch"]
    assert g["untracked"] == ["notes.txt"]


# ------------------------------------------------------------------------------------------------ 2. track diff
PROBE = "rldk_probe_pkg"

BUILD = """\
import sys
import torch
from rldk.tracking import ExperimentTracker, TrackingConfig
out, data, code = sys.argv[1:4]
tracker = ExperimentTracker(TrackingConfig(experiment_name="run", manifest_path=out, code_dir=code))
tracker.start_experiment()
tracker.set_seeds(0, deterministic=False)
tracker.set_config({"learning_rate": 1e-5, "batch_size": 8, "betas": (0.9, 0.99)})
tracker.track_dataset(data, "train")
torch.manual_seed(0)
tracker.track_model(torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)), "policy")
tracker.add_metadata("note", "diff test")
tracker.finish_experiment()
"""


def make_repo(path):
    path.mkdir(parents=True)
    git = ["git", "-c", "user.name=rldk", "-c", "user.email=rldk@example.invalid", "-c", "init.defaultBranch=main"]
    subprocess.run(git + ["init", "-q"], cwd=path, check=True)
    write(path / "train.py", "LR = 1e-5\n")
    write(path / "model.py", "".join("LAYER_%d = %d\n" % (i, i) for i in range(50)))
    subprocess.run(git + ["add", "."], cwd=path, check=True)
    subprocess.run(git + ["commit", "-q", "-m", "start"], cwd=path, check=True)
    return path


def write_probe(site, version):
    for old in site.glob(PROBE + "-*.dist-info"):
        shutil.rmtree(old)
    write(site / ("%s-%s.dist-info" % (PROBE, version)) / "METADATA",
          "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (PROBE, version))


class DiffBench:
    """A 100 MB dataset file, a git repository with committed code, and a folder on PYTHONPATH holding a fake
    distribution; manifests are built in fresh interpreters with the same arguments and environment."""

    def __init__(self, root):
        self.root = root
        self.data = root / "data" / "train.bin"
        self.data.parent.mkdir(parents=True)
        self.data.write_bytes(np.random.default_rng(0).bytes(100 * 2 ** 20))
        self.repo = make_repo(root / "repo")
        self.site = root / "site"
        write_probe(self.site, "1.0")
        self.script = write(root / "build.py", BUILD)
        self.env = dict(os.environ, RLDK_SILENCE_SEED_WARNINGS="1",
                        PYTHONPATH=os.pathsep.join([str(self.site)] + ([os.environ["PYTHONPATH"]]
                                                                       if os.environ.get("PYTHONPATH") else [])))
        self.baseline = self.build("a")

    def build(self, name):
        out = self.root / "manifests" / name / "rldk_manifest.json"
        proc = subprocess.run([sys.executable, str(self.script), str(out), str(self.data), str(self.repo)],
                              cwd=str(self.root), env=self.env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return out

    def changed_leaves(self, b):
        """The manifest's own answer, before the command's: every leaf that differs from the baseline, except the
        fields that are different in every run (ids, times)."""
        a, c = flatten(read(self.baseline)), flatten(read(b))
        return sorted(k for k in set(a) | set(c) if a.get(k) != c.get(k) and not k.startswith(PER_RUN_FIELDS))

    def diff(self, b):
        proc = subprocess.run([rldk_binary(), "track", "diff", str(self.baseline), str(b), "--json"],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode in (0, 1), (proc.returncode, proc.stderr)
        report = json.loads(proc.stdout)
        assert report["schema"] == "rldk.track-diff/v1"
        assert report["identical"] == (proc.returncode == 0) == (report["changes"] == [])
        return report["changes"]


PER_RUN_FIELDS = ("/experiment_id", "/started_at", "/finished_at", "/timings")


def flatten(value, path="", out=None):
    out = {} if out is None else out
    if isinstance(value, dict):
        for k, v in value.items():
            flatten(v, "%s/%s" % (path, k), out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            flatten(v, "%s[%d]" % (path, i), out)
    else:
        out[path] = value
    return out


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    if rldk_binary() is None:
        pytest.skip("the rldk command is not installed")
    return DiffBench(tmp_path_factory.mktemp("track_diff"))


def value(text):
    """A change's a/b: the value as JSON text (or null when absent)."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def test_rebuilding_the_same_run_is_identical(bench):
    same = bench.build("same")
    assert bench.changed_leaves(same) == []
    assert bench.diff(same) == []


def test_one_byte_in_the_middle_of_a_100mb_dataset_is_the_only_change(bench):
    middle = 50 * 2 ** 20 + 12345
    with open(bench.data, "r+b") as f:
        f.seek(middle)
        byte = f.read(1)
        f.seek(middle)
        f.write(bytes([byte[0] ^ 0x01]))
    try:
        b = bench.build("byte")
    finally:
        with open(bench.data, "r+b") as f:
            f.seek(middle)
            f.write(byte)
    assert bench.changed_leaves(b) == ["/datasets/train/files[0]/hash", "/datasets/train/hash"]
    changes = bench.diff(b)
    assert [(c["section"], c["key"]) for c in changes] == [("datasets", "train")], changes
    assert any(line.endswith("files[train.bin] differs") for line in changes[0]["detail"]), changes  # named


def test_one_line_of_uncommitted_code_is_the_only_change(bench):
    source = bench.repo / "model.py"
    original = source.read_text()
    source.write_text(original.replace("LAYER_25 = 25\n", "LAYER_25 = 26\n"))
    try:
        b = bench.build("code")
    finally:
        source.write_text(original)
    manifest = read(b)
    assert bench.changed_leaves(b) == ["/git/dirty", "/git/patch", "/git/patch_hash"]
    changes = bench.diff(b)
    assert {c["section"] for c in changes} == {"git"}, changes
    assert "patch" in {c["key"] for c in changes}
    patch_lines = [line for c in changes if c["key"] == "patch" for line in c["detail"]]
    assert any("LAYER_25 = 26" in line for line in patch_lines), patch_lines
    assert "-LAYER_25 = 25\n+LAYER_25 = 26\n" in manifest["git"]["patch"] and manifest["git"]["dirty"]


def test_one_package_version_is_the_only_change(bench):
    write_probe(bench.site, "1.1")
    try:
        b = bench.build("package")
    finally:
        write_probe(bench.site, "1.0")
    assert bench.changed_leaves(b) == ["/environment/packages/%s" % PROBE]
    assert read(bench.baseline)["environment"]["packages"][PROBE] == "1.0"
    changes = bench.diff(b)
    assert [(c["section"], c["key"]) for c in changes] == [("packages", PROBE)], changes
    assert value(changes[0]["a"]) == "1.0" and value(changes[0]["b"]) == "1.1"


# ------------------------------------------------------------------------------------------------ 3. hashes
def flip(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0x80]))


def test_file_and_folder_hashes_cover_every_byte(tmp_path):
    data = write(tmp_path / "d" / "part-0.bin", np.random.default_rng(1).bytes(1 << 20), mode="wb")
    write(tmp_path / "d" / "sub" / "part-1.jsonl", '{"prompt": "a"}\n')
    one = fingerprint_dataset(data)
    folder = fingerprint_dataset(tmp_path / "d")
    assert one["kind"] == folder["kind"] == "files" and one["bytes"] == 1 << 20
    assert one["files"] == [{"path": "part-0.bin", "bytes": 1 << 20, "hash": one["hash"]}]
    assert one["root"] == folder["root"] == str(tmp_path / "d")
    assert [f["path"] for f in folder["files"]] == ["part-0.bin", "sub/part-1.jsonl"]
    for offset in (0, 1 << 19, (1 << 20) - 1):
        flip(data, offset)
        assert fingerprint_dataset(data)["hash"] != one["hash"]
        assert fingerprint_dataset(tmp_path / "d")["hash"] != folder["hash"]
        flip(data, offset)
        assert fingerprint_dataset(data)["hash"] == one["hash"]
    shutil.copytree(tmp_path / "d", tmp_path / "copy")
    assert fingerprint_dataset(tmp_path / "copy")["hash"] == folder["hash"]  # same content, same relative paths
    os.rename(tmp_path / "copy" / "sub" / "part-1.jsonl", tmp_path / "copy" / "sub" / "part-2.jsonl")
    assert fingerprint_dataset(tmp_path / "copy")["hash"] != folder["hash"]  # a renamed file is a change
    with pytest.raises(FileNotFoundError):
        fingerprint_dataset(tmp_path / "missing")


def test_numpy_hash_changes_with_any_element_dtype_or_shape():
    a = np.arange(1000, dtype=np.float32)
    base = fingerprint_dataset(a)
    assert base["kind"] == "numpy" and base["rows"] == 1000 and base["bytes"] == 4000
    assert fingerprint_dataset(a.copy())["hash"] == base["hash"]
    for i in (0, 500, 999):
        b = a.copy()
        b[i] = np.nextafter(b[i], np.float32(np.inf))
        assert fingerprint_dataset(b)["hash"] != base["hash"]
    assert fingerprint_dataset(a.astype(np.float64))["hash"] != base["hash"]
    assert fingerprint_dataset(a.reshape(10, 100))["hash"] != base["hash"]
    strided = np.arange(2000, dtype=np.float32)[::2]  # not contiguous: hashed as its C-order copy
    assert fingerprint_dataset(strided)["hash"] == fingerprint_dataset(np.ascontiguousarray(strided))["hash"]


def test_pandas_hash_covers_every_column_and_value():
    pd = pytest.importorskip("pandas")

    def frame():
        return pd.DataFrame({
            "step": np.arange(6, dtype=np.int64),
            "reward": [0.5, -1.0, float("nan"), 2.0, 3.5, 0.0],
            "prompt": ["a", "bb", "ccc", "", "é", "x"],
            "mixed": [1, "1", None, [1, 2], {"k": 1}, 2.5],
            "n": pd.array([1, None, 3, 4, 5, 6], dtype="Int64"),
            "cat": pd.Categorical(["x", "y", "x", "y", "x", "z"]),
            "when": pd.date_range("2026-01-01", periods=6, freq="D", tz="UTC"),
        })
    base = fingerprint_dataset(frame())
    assert base["kind"] == "pandas" and base["rows"] == 6
    assert [c["name"] for c in base["columns"]] == list(frame().columns)
    assert fingerprint_dataset(frame())["hash"] == base["hash"]
    edits = {"step": 99, "reward": 0.25, "prompt": "bc", "mixed": "2", "n": 7, "cat": "z",
             "when": pd.Timestamp("2027-01-01", tz="UTC")}
    for column, new in edits.items():
        for row in (1, 4):
            changed = frame()
            changed.loc[row, column] = new
            fp = fingerprint_dataset(changed)
            assert fp["hash"] != base["hash"], (column, row)
            moved = [c["name"] for c, b in zip(fp["columns"], base["columns"]) if c["hash"] != b["hash"]]
            assert moved == [column], (column, row, moved)
    nulls = frame()
    nulls.loc[1, "n"] = 0  # a missing value replaced by 0 is a change, though missing values are hashed as 0
    assert fingerprint_dataset(nulls)["hash"] != base["hash"]
    # String boundaries are part of the content.
    assert fingerprint_dataset(pd.DataFrame({"s": ["ab", "c"]}))["hash"] != \
        fingerprint_dataset(pd.DataFrame({"s": ["a", "bc"]}))["hash"]
    assert fingerprint_dataset(pd.DataFrame({"s": [None, "x"]}))["hash"] != \
        fingerprint_dataset(pd.DataFrame({"s": ["None", "x"]}))["hash"]
    renamed = frame().rename(columns={"reward": "score"})
    assert fingerprint_dataset(renamed)["hash"] != base["hash"]
    assert fingerprint_dataset(frame().astype({"step": np.int32}))["hash"] != base["hash"]


def test_pyarrow_hash_covers_every_value_and_ignores_storage_outside_a_slice():
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"x": list(range(100)), "s": ["w%d" % i for i in range(100)]})
    base = fingerprint_dataset(table)
    assert base["kind"] == "arrow" and base["rows"] == 100
    assert fingerprint_dataset(pa.table({"x": list(range(100)), "s": ["w%d" % i for i in range(100)]}))["hash"] \
        == base["hash"]
    changed = pa.table({"x": list(range(99)) + [1000], "s": ["w%d" % i for i in range(100)]})
    assert fingerprint_dataset(changed)["hash"] != base["hash"]
    for start, length in ((10, 20), (0, 10), (90, 10)):  # a slice shares its parent's buffers, offset 0 or not
        rebuilt = pa.table({"x": list(range(start, start + length)),
                            "s": ["w%d" % i for i in range(start, start + length)]})
        assert fingerprint_dataset(table.slice(start, length))["hash"] == fingerprint_dataset(rebuilt)["hash"]
    nulls = pa.table({"f": [1.5, None, 2.5, None], "b": [True, None, False, True], "s": ["a", None, "b", "c"]})
    assert fingerprint_dataset(nulls.slice(1, 3))["hash"] == \
        fingerprint_dataset(pa.table({"f": [None, 2.5, None], "b": [None, False, True], "s": [None, "b", "c"]}))["hash"]
    assert fingerprint_dataset(pa.table({"f": [1.0, None]}))["hash"] != \
        fingerprint_dataset(pa.table({"f": [1.0, 0.0]}))["hash"]  # a null is not a zero
    assert fingerprint_dataset(table.to_batches()[0])["hash"] == base["hash"]


def test_hf_dataset_hash_in_memory_and_from_arrow_cache_files(tmp_path):
    datasets = pytest.importorskip("datasets")
    rows = {"prompt": ["p%d" % i for i in range(50)], "score": [float(i) for i in range(50)]}
    ds = datasets.Dataset.from_dict(rows)
    base = fingerprint_dataset(ds)
    assert base["kind"] == "hf_dataset" and base["rows"] == 50 and "files" not in base
    assert fingerprint_dataset(datasets.Dataset.from_dict(rows))["hash"] == base["hash"]
    changed = dict(rows, prompt=rows["prompt"][:25] + ["p25!"] + rows["prompt"][26:])
    assert fingerprint_dataset(datasets.Dataset.from_dict(changed))["hash"] != base["hash"]
    # Views: the selected rows count, not only the table underneath.
    assert fingerprint_dataset(ds.select(range(10)))["hash"] != fingerprint_dataset(ds.select(range(1, 11)))["hash"]

    ds.save_to_disk(str(tmp_path / "saved"))
    loaded = datasets.load_from_disk(str(tmp_path / "saved"))
    on_disk = fingerprint_dataset(loaded)
    (arrow_file,) = on_disk["files"]
    arrow_path = os.path.join(on_disk["root"], arrow_file["path"])
    assert on_disk["kind"] == "hf_dataset" and arrow_path == loaded.cache_files[0]["filename"]
    assert on_disk["bytes"] == os.path.getsize(arrow_path)
    assert fingerprint_dataset(datasets.load_from_disk(str(tmp_path / "saved")))["hash"] == on_disk["hash"]
    # A view of the cache file that is not the whole file (columns dropped) is hashed by its values instead.
    dropped = fingerprint_dataset(loaded.remove_columns(["score"]))
    assert "files" not in dropped and [c["name"] for c in dropped["columns"]] == ["prompt"]
    del loaded
    flip(arrow_path, os.path.getsize(arrow_path) // 2)
    assert fingerprint_dataset(datasets.load_from_disk(str(tmp_path / "saved")))["hash"] != on_disk["hash"]

    split = datasets.DatasetDict({"train": ds, "test": ds.select(range(5))})
    tracker = ExperimentTracker(TrackingConfig(experiment_name="dd", output_dir=tmp_path / "runs",
                                               enable_git_tracking=False, enable_environment_tracking=False))
    tracker.track_dataset(split, "prompts")
    assert sorted(tracker.datasets) == ["prompts:test", "prompts:train"]
    with pytest.raises(TypeError, match="streaming"):
        fingerprint_dataset(ds.to_iterable_dataset())


def test_python_objects_hash_by_canonical_json():
    a = [{"prompt": "x", "score": 1}, {"prompt": "y", "score": 2}]
    b = [{"score": 1, "prompt": "x"}, {"score": 2, "prompt": "y"}]  # same content, other key order
    assert fingerprint_dataset(a)["hash"] == fingerprint_dataset(b)["hash"]
    assert fingerprint_dataset([{"prompt": "x", "score": 1}, {"prompt": "y", "score": 3}])["hash"] != \
        fingerprint_dataset(a)["hash"]
    assert fingerprint_dataset({"k": [1, 2]})["rows"] is None
    with pytest.raises(TypeError, match="cannot hash"):
        fingerprint_dataset(object())


def test_model_weights_hash_names_the_tensor_that_moved():
    tokenizer = tiny_models.make_tokenizer()
    model = tiny_models.make_model(tokenizer)
    base = fingerprint_model(model)
    assert fingerprint_model(tiny_models.make_model(tokenizer))["weights_hash"] == base["weights_hash"]
    assert base["class"] == "transformers.models.gpt2.modeling_gpt2.GPT2LMHeadModel"
    assert base["bytes"] == sum(t.numel() * t.element_size() for t in list(model.parameters()) +
                                list(model.buffers()))
    with torch.no_grad():
        model.transformer.h[1].mlp.c_fc.weight[3, 7] += 1e-3
    moved = fingerprint_model(model)
    assert moved["weights_hash"] != base["weights_hash"] and moved["architecture_hash"] == base["architecture_hash"]
    changed = [t["name"] for t, b in zip(moved["tensors"], base["tensors"]) if t["hash"] != b["hash"]]
    assert changed == ["transformer.h.1.mlp.c_fc.weight"]

    half = fingerprint_model(tiny_models.make_model(tokenizer).to(torch.bfloat16))
    assert half["architecture_hash"] != base["architecture_hash"]  # dtypes are part of the architecture
    assert {t["dtype"] for t in half["tensors"] if t["role"] == "param"} == {"bfloat16"}
    bf = tiny_models.make_model(tokenizer).to(torch.bfloat16)
    with torch.no_grad():
        bf.lm_head.weight[0, 0] = bf.lm_head.weight[0, 0] + 1  # the tied embedding, one bf16 element
    assert fingerprint_model(bf)["weights_hash"] != half["weights_hash"]
    frozen = tiny_models.make_model(tokenizer)
    frozen.transformer.wte.requires_grad_(False)
    fp = fingerprint_model(frozen)
    assert fp["trainable_parameters"] == fp["parameters"] - frozen.transformer.wte.weight.numel()


def test_tokenizer_hash_changes_with_the_vocabulary():
    a = fingerprint_tokenizer(tiny_models.make_tokenizer())
    assert a == fingerprint_tokenizer(tiny_models.make_tokenizer())
    tok = tiny_models.make_tokenizer()
    tok.add_tokens(["<tool>"])
    b = fingerprint_tokenizer(tok)
    assert b["hash"] != a["hash"] and b["vocab_size"] == a["vocab_size"] + 1
    tok = tiny_models.make_tokenizer()
    tok.chat_template = "{{ messages }}"
    assert fingerprint_tokenizer(tok)["hash"] != a["hash"]


# ------------------------------------------------------------------------------------------------ export
def test_export_to_wandb_offline(tmp_path, monkeypatch):
    wandb = pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    cfg = TrackingConfig(experiment_name="exp/wb".replace("/", "-"), output_dir=tmp_path / "runs",
                         enable_git_tracking=False, save_to_wandb=True, wandb_project="rldk-test",
                         config={"learning_rate": 1e-5})
    with ExperimentTracker(cfg) as tracker:
        tracker.track_dataset(np.arange(10), "ids")
    wandb.teardown()
    result = tracker.exports["wandb"]
    assert "error" not in result, result
    (run_file,) = (tmp_path / "wandb").glob("offline-run-*/run-*.wandb")
    assert run_file.parent.name.endswith(result["run_id"])
    # The offline run's records: the config (with the provenance summary) and the artifact with the manifest file.
    records = run_file.read_bytes()
    assert b"learning_rate" in records and result["artifact"].encode() in records
    assert read(tracker.manifest_path)["datasets"]["ids"]["hash"].encode() in records
    assert b"rldk_manifest.json" in records


def test_export_to_mlflow_file_store(tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps the file store behind this switch
    uri = (tmp_path / "mlruns").as_uri()
    cfg = TrackingConfig(experiment_name="ml", output_dir=tmp_path / "runs", enable_git_tracking=False,
                         save_to_mlflow=True, mlflow_tracking_uri=uri, mlflow_experiment="rldk-test",
                         config={"learning_rate": 1e-5, "optim": {"betas": [0.9, 0.99]}})
    with ExperimentTracker(cfg) as tracker:
        tracker.set_seeds(3, deterministic=False)
    result = tracker.exports["mlflow"]
    assert "error" not in result, result
    client = mlflow.MlflowClient(tracking_uri=uri)
    run = client.get_run(result["run_id"])
    assert run.data.params["learning_rate"] == "1e-05" and run.data.params["optim.betas"] == "[0.9,0.99]"
    assert run.data.tags["rldk.seed"] == "3" and run.data.tags["rldk.schema"] == SCHEMA
    local = client.download_artifacts(result["run_id"], "rldk/rldk_manifest.json", str(tmp_path / "dl"))
    assert read(local) == read(tracker.manifest_path)


def test_export_failure_is_a_warning_and_the_manifest_stays(tmp_path, monkeypatch):
    pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    blocker = write(tmp_path / "not_a_dir", "x")
    cfg = TrackingConfig(experiment_name="bad", output_dir=tmp_path / "runs", enable_git_tracking=False,
                         save_to_mlflow=True, mlflow_tracking_uri=(blocker / "mlruns").as_uri())
    tracker = ExperimentTracker(cfg)
    with pytest.warns(UserWarning, match="exporting the manifest to mlflow failed"):
        path = tracker.finish_experiment()
    assert read(path)["status"] == "finished" and "error" in tracker.exports["mlflow"]


def test_import_rldk_tracking_stays_light():
    code = ("import sys, rldk, rldk.tracking; heavy = [m for m in ('torch', 'pandas', 'datasets', 'wandb', 'mlflow')"
            " if m in sys.modules]; print(heavy); sys.exit(1 if heavy else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert hasattr(rldk, "tracking")


def test_manifest_floats_round_trip(tmp_path):
    tracker = ExperimentTracker(TrackingConfig(experiment_name="f", output_dir=tmp_path, enable_git_tracking=False,
                                               enable_environment_tracking=False))
    tracker.set_config({"lr": 1e-7, "clip": 0.2, "beta": float("nan"), "eps": np.float64(1e-300)})
    m = read(tracker.finish_experiment())
    assert m["config"] == {"lr": 1e-7, "clip": 0.2, "beta": "NaN", "eps": 1e-300}
    assert not math.isnan(m["timings"]["duration_s"])
