"""Every `rldk ...` command line of the product brief (the older tool's docs, ../shared/seeds/*.txt) runs as written,
or answers with the one clear line that names its status and what to run instead.

The lines are extracted from the documents, not copied here: a line added to the brief fails this test until it is
accounted for in OUTCOMES. Each line runs in a sandbox that holds inputs of the right kind under the names the line
uses (run logs, rollouts, checkpoints, score files, a git history, a W&B offline run, an MLflow file store, small
trainers for --cmd). Placeholders (`<trainer_pid>`, `<entity/project/run>`) are filled with real values. The table
of lines and outcomes is printed (pytest -s), so the coverage is visible.
"""
import concurrent.futures
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import ROOT
from rollout_fixtures import write_pairs, write_rollouts
from test_cli import rldk_binary

SEEDS = ROOT.parent / "shared" / "seeds"

# Outcome of each line: "ok" (exit 0, or 1 for a gate or a finding the line asks about), "follows" (a live monitor
# that is still following its source when stopped), or ("message", REGEX): exit 2 with one stderr line matching.
OUTCOMES = {
    # 000: case studies
    "rldk diff --a run_1 --b run_2 --signals kl_divergence,reward_mean --output-dir analysis": "ok",
    'rldk check-determinism --cmd "python train_safety.py --seed 42" --compare reward_mean,safety_score --replicas 5':
        "ok",
    "rldk reward-health --run code_training_logs.jsonl --output-dir health_analysis": "ok",
    "rldk data-integrity --manifest data_lineage.md --data-dir datasets/": ("message", r"rldk lineage verify"),
    "rldk data-contamination --train train_data.jsonl --val val_data.jsonl": "ok",
    "rldk profile --run training_logs.jsonl --metrics memory_usage,compute_time --output-dir profile_analysis": "ok",
    "rldk diff --a run_1 --b run_2 --signals reward_mean,loss": "ok",
    'rldk check-determinism --cmd "python your_training.py" --compare reward_mean': "ok",
    "rldk reward-health --run your_logs.jsonl": "ok",
    # 002: blog walk-through
    "rldk forensics log-scan test_artifacts/logs_doctored_kl_spike": "ok",
    "rldk forensics doctor   test_artifacts/logs_doctored_kl_spike": "ok",
    'rldk check-determinism --cmd "python scripts/blog_determinism_sim.py --mode nondet --steps 200 --sleep 0.02" '
    "--compare kl,policy_loss,reward_mean --replicas 4 --output-dir docs/assets/blog_catch_failures/determinism_nondet":
        "ok",
    'rldk check-determinism --cmd "python scripts/blog_determinism_sim.py --mode deterministic --steps 200 --sleep '
    '0.02" --compare kl,policy_loss,reward_mean --replicas 4 --output-dir '
    "docs/assets/blog_catch_failures/determinism_det": "ok",
    # 003: the README
    "rldk seed --seed 42 --deterministic": "ok",
    "rldk seed --show": "ok",
    "rldk seed --env --validate": "ok",
    "python examples/minimal_streaming_loop.py | rldk monitor --rules ppo_safe --preset trl --alerts "
    "artifacts/alerts.jsonl": "ok",
    "python examples/grpo_minimal_loop.py | rldk monitor --rules grpo_safe --preset grpo --alerts "
    "artifacts/grpo_alerts.jsonl": "ok",
    "rldk monitor --stream artifacts --rules ppo_strict --preset accelerate --pid <trainer_pid>": "follows",
    "rldk monitor --once artifacts/run.jsonl --rules my_rules.yaml --report artifacts/report.json": "ok",
    "rldk monitor --from-wandb my-entity/my-project/my-run --rules ppo_safe --alerts artifacts/wandb_alerts.jsonl":
        "follows",
    "rldk monitor --from-mlflow 0123456789abcdef --rules dpo_basic --alerts artifacts/mlflow_alerts.jsonl": "follows",
    "python train_trl.py | rldk monitor --rules ppo_safe --regex trl --alerts artifacts/stdout_alerts.jsonl": "ok",
    "rldk monitor --stream artifacts/grpo_run.jsonl --rules grpo_safe --preset grpo": "follows",
    "rldk monitor --stream artifacts/run.jsonl --rules rules.yaml --pid <trainer_pid>": "follows",
    "rldk monitor --stream artifacts/run.jsonl --rules kl_drift": "follows",
    'rldk track "my_experiment" --interactive': ("message", r"rldk\.tracking\.ExperimentTracker"),
    'rldk track "my_first_experiment"': ("message", r"rldk\.tracking\.ExperimentTracker"),
    "rldk forensics env-audit ./my_training_run": "ok",
    "rldk forensics log-scan ./my_training_run": "ok",
    "rldk forensics kl-drift ./my_training_run": "ok",
    "rldk forensics diff-ckpt model_a.pt model_b.pt": "ok",
    "rldk forensics compare-runs run_a run_b": "ok",
    "rldk forensics doctor ./my_training_run": "ok",
    "rldk reward reward-drift model_a model_b --prompts prompts.jsonl": "ok",
    "rldk reward reward-health run --scores scores.jsonl --out ./reports": "ok",
    "rldk reward length-bias --run-path run.jsonl --response-col response_text --reward-col reward_mean "
    "--output-dir ./reports": "ok",
    "rldk evals evaluate data.jsonl --suite comprehensive --output results.json": "ok",
    "rldk evals list-suites": "ok",
    "rldk evals validate-data data.jsonl": "ok",
    'rldk check-determinism --cmd "python train.py" --compare loss,reward_mean': "ok",
    'rldk replay ./run --command "python train.py --seed {seed}" --metrics loss,reward_mean': "ok",
    'rldk bisect --good abc123 --bad def456 --cmd "python train.py"': ("message", r"--metric and --cmp are required"),
    "rldk ingest ./logs --adapter trl --output metrics.jsonl": "ok",
    "rldk diff --a run_a --b run_b --signals loss,reward_mean": "ok",
    "rldk card determinism run_a": "ok",
    "rldk card drift run_a run_b": "ok",
    "rldk card reward run_a": "ok",
    "rldk forensics diff-ckpt checkpoint_100.pt checkpoint_200.pt": "ok",
    'rldk check-determinism --cmd "python train.py" --compare loss,reward_mean --replicas 5': "ok",
    'rldk replay ./my_training_run --command "python train.py --seed {seed}" --metrics loss,reward_mean': "ok",
    "rldk evals evaluate data.jsonl --suite quick --output results.json": "ok",
    # 004: the field guide
    "rldk monitor --from-wandb <entity/project/run> --preset grpo --rules grpo_safe --alerts artifacts/alerts.jsonl":
        "follows",
    "rldk forensics log-scan ./runs/my_run": "ok",
    "rldk forensics doctor ./runs/my_run": "ok",
    "rldk reward-health --run runs/my_run/rollouts.jsonl --reference runs/baseline/rollouts.jsonl "
    "--gold eval_results.jsonl --gate": ("message", r"--reference .*not built"),
    "rldk reward reward-drift RM_A RM_B --prompts prompts.jsonl": "ok",
    "rldk monitor --stream artifacts/grpo_run.jsonl --preset grpo --rules grpo_safe --alerts "
    "artifacts/grpo_alerts.jsonl": "follows",
    "rldk reward-health --run runs/current/rollouts.jsonl --reference runs/baseline/rollouts.jsonl "
    "--gold eval_results.jsonl": ("message", r"--reference .*not built"),
    "rldk reward reward-drift ./rmA ./rmB --prompts prompts.jsonl": "ok",
    "rldk monitor --stream artifacts/run.jsonl --rules grpo_strict --preset grpo": "follows",
    "rldk forensics env-audit ./my_repo_or_run": "ok",
    'rldk check-determinism --cmd "python train.py --config config.yaml" --compare kl_mean,reward_mean,entropy_mean '
    "--replicas 3 --steps 1000,5000,10000": "ok",
    'rldk check-determinism --cmd "python train.py --steps 1000" --compare kl_mean,reward_mean,entropy_mean '
    "--replicas 2": "ok",
    "rldk forensics env-audit --repo-dir . --output-dir reports/": "ok",
    "rldk monitor --from-wandb org/project/run-id --preset grpo --rules kl_spike,kl_drift,entropy_floor,"
    "gradient_spike --alert-webhook https://your-slack-webhook": ("message", r"--rules kl_spike: .*not a preset"),
    "rldk forensics doctor --run-dir runs/YYYY-MM-DD/": "ok",
    "rldk reward-health --run runs/YYYY-MM-DD/rollouts.jsonl --gold eval_results.jsonl --output-dir "
    "reports/reward_health/": ("message", r"--gold .*column"),
    'rldk bisect --good origin/main~15 --bad HEAD --cmd "python train.py --steps 2000 --output metrics.jsonl" '
    '--metric reward_mean --cmp "> 0.87" --window 100': "ok",
    'rldk check-determinism --cmd "python train.py --steps 1000" --compare reward_mean,kl_mean,entropy_mean '
    "--replicas 2": "ok",
    "rldk monitor --from-wandb your-org/your-project/run-id --preset grpo": "follows",
    "rldk reward-health --run runs/YYYY-MM-DD/rollouts.jsonl --output-dir reports/reward_health/": "ok",
}

# Lines that are not commands of this tool although they mention it.
NOT_COMMANDS = ("pytest --cov=rldk",)


def extract_lines(text):
    """Command lines starting with `rldk ` (or a pipe into it) in the documents: code lines with their `\\`
    continuations, commented examples (`# rldk ...`), and inline `...` spans that carry options."""
    lines, spans = [], []
    raw = text.splitlines()
    i = 0
    while i < len(raw):
        line = raw[i].strip()
        joined = line
        while joined.endswith("\\") and i + 1 < len(raw):
            i += 1
            joined = joined[:-1].rstrip() + " " + raw[i].strip()
        i += 1
        candidate = joined[2:] if joined.startswith("# rldk ") else joined
        if re.match(r"^(\S+ )*\S*\.py \| rldk ", candidate) or candidate.startswith("rldk "):
            lines.append(candidate)
        for span in re.findall(r"`(rldk [^`]+)`", joined):
            if " --" in span:
                lines.append(span)
            else:
                spans.append(span)
    return lines, spans


def brief_lines():
    if not SEEDS.is_dir():
        pytest.skip("the product brief is not next to the repository (%s)" % SEEDS)
    lines, spans = [], []
    for path in sorted(SEEDS.glob("*.txt")):
        found, named = extract_lines(path.read_text(encoding="utf-8"))
        lines += [(path.name, line) for line in found]
        spans += [(path.name, span) for span in named]
    return lines, spans


# ---------------------------------------------------------------------------------------------------- inputs

TRAINER = r'''
import json, os, sys, random
args = sys.argv[1:]
steps = 30
if "--steps" in args:
    steps = min(int(args[args.index("--steps") + 1]), 60)
seed = int(args[args.index("--seed") + 1]) if "--seed" in args else 0
quality = float(open("quality.txt").read()) if os.path.exists("quality.txt") else 0.9
rng = random.Random(seed)
out = os.environ.get("RLDK_METRICS_PATH")
if "--output" in args:
    out = args[args.index("--output") + 1]
f = open(out, "a") if out else None
# A real trainer reaches step 10000; this one jumps there in thousands after its first steps, so lines that
# compare --steps 1000,5000,10000 find them.
for step in list(range(1, steps + 1)) + [1000 * k for k in range(1, 11)]:
    row = {"step": step, "loss": 1.0 / step + rng.random() * 1e-3, "reward_mean": quality + rng.random() * 1e-3,
           "kl": 0.01 + rng.random() * 1e-3, "kl_mean": 0.01, "entropy_mean": 2.0, "policy_loss": 0.1,
           "safety_score": 0.5, "seed": seed}
    line = json.dumps(row)
    print(line, flush=True)
    if f:
        f.write(line + "\n")
'''

TRL_CONSOLE = r'''
for step in range(1, 21):
    print({"loss": 0.5, "reward": 0.1 * step, "kl": 0.01, "entropy": 2.0, "epoch": step / 20.0, "step": step},
          flush=True)
'''

RULES_YAML = """rules:
  - id: reward_floor
    description: Reward far below anything a healthy run logs.
    metric: reward/mean
    condition: value < -100
    actions: [warn]
"""


def write_run(path, steps=300, kl_spike=False, memory=True, shift=0.0):
    """A PPO-style wide JSONL log with a memory metric and step time, so every analysis has something to read."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(len(str(path)))
    with open(path, "w") as f:
        for step in range(1, steps + 1):
            kl = 0.02 + 0.002 * rng.standard_normal() + (0.5 if kl_spike and 200 <= step < 210 else 0.0)
            row = {"step": step, "kl": kl, "kl_divergence": kl, "reward_mean": 0.3 + step / 1000 + shift,
                   "loss": 1.0 / step, "entropy": 2.0 - step / 1000, "grad_norm": 1.0 + 0.1 * rng.random(),
                   "step_time": 1.0 + 0.05 * rng.random(), "timing_s/gen": 0.6, "timing_s/update_actor": 0.3}
            if memory:
                row["memory_usage"] = 8.0 + 8.0 * step / steps
                row["compute_time"] = row["step_time"]
            f.write(json.dumps(row) + "\n")


def write_samples(path, rows=240):
    """Per-sample rollouts as one JSONL file, with the older tool's column names too."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    with open(path, "w") as f:
        for i in range(rows):
            words = int(rng.integers(5, 60))
            text = " ".join(["word"] * words)
            reward = float(0.01 * words + 0.1 * rng.standard_normal())
            f.write(json.dumps({"step": 1 + i // 24, "prompt": "prompt %d" % (i % 12), "completion": text,
                                "response_text": text, "reward": reward, "reward_mean": reward}) + "\n")


def write_checkpoint(path, scale):
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(0)
    torch.save({"layer.weight": torch.randn(8, 8, generator=g) * scale, "layer.bias": torch.zeros(8)}, path)


def build_sandbox(root):
    root.mkdir(parents=True, exist_ok=True)
    for name in ("run_1", "run_a", "my_training_run", "runs/my_run", "runs/YYYY-MM-DD", "run"):
        write_run(root / name / "metrics.jsonl")
    for name in ("run_2", "run_b"):
        write_run(root / name / "metrics.jsonl", kl_spike=True, shift=0.05)
    write_run(root / "test_artifacts" / "logs_doctored_kl_spike" / "metrics.jsonl", kl_spike=True)
    write_run(root / "training_logs.jsonl")
    write_run(root / "my_repo_or_run" / "metrics.jsonl")
    (root / "my_repo_or_run" / "train.py").write_text("import random\nrandom.seed(0)\n")
    for name in ("artifacts/run.jsonl", "artifacts/grpo_run.jsonl"):
        write_run(root / name, steps=40)
    # `rldk card reward run_a`: the run's folder holds its rollouts too (TRL's completions/).
    write_rollouts(root / "run_a" / "completions", "length_bias", fmt="trl_parquet", steps=6, prompts=6, group=4)
    for name in ("code_training_logs.jsonl", "your_logs.jsonl", "run.jsonl", "scores.jsonl",
                 "runs/my_run/rollouts.jsonl", "runs/current/rollouts.jsonl", "runs/baseline/rollouts.jsonl",
                 "runs/YYYY-MM-DD/rollouts.jsonl"):
        write_samples(root / name)
    write_rollouts(root / "run" / "completions", "clean", fmt="trl_parquet", steps=6, prompts=6, group=4)
    (root / "eval_results.jsonl").write_text('{"prompt": "p", "gold": 1.0}\n')
    # `rldk data-contamination`: a validation prompt that also sits in the training prompts.
    question = "what is the sum of the first twenty positive integers if each one is counted exactly once please"
    (root / "train_data.jsonl").write_text(json.dumps({"prompt": question}) + "\n" +
                                           json.dumps({"prompt": "an unrelated training prompt"}) + "\n")
    (root / "val_data.jsonl").write_text(json.dumps({"prompt": question}) + "\n")
    # Two small reward models (transformers folders), scored on prompts.jsonl by `rldk reward drift`.
    write_reward_models(root)
    write_checkpoint(root / "model_a.pt", 1.0)
    write_checkpoint(root / "model_b.pt", 1.1)
    write_checkpoint(root / "checkpoint_100.pt", 1.0)
    write_checkpoint(root / "checkpoint_200.pt", 1.2)
    with open(root / "data.jsonl", "w") as f:
        for arm in ("base", "tuned"):
            for item in range(20):
                f.write(json.dumps({"arm": arm, "task": "qa", "item": item, "score": 0.5 + 0.01 * item,
                                    "reward": 0.5, "helpfulness": 0.7, "harmlessness": 0.9,
                                    "kl_divergence": 0.02}) + "\n")
    (root / "logs").mkdir()
    shutil.copy(ROOT / "examples" / "grpo_trl" / "trainer_state.json", root / "logs" / "trainer_state.json")
    (root / "my_rules.yaml").write_text(RULES_YAML)
    (root / "rules.yaml").write_text(RULES_YAML)
    for script in ("train.py", "train_safety.py", "your_training.py", "scripts/blog_determinism_sim.py",
                   "examples/minimal_streaming_loop.py", "examples/grpo_minimal_loop.py"):
        (root / script).parent.mkdir(parents=True, exist_ok=True)
        (root / script).write_text(TRAINER)
    (root / "train_trl.py").write_text(TRL_CONSOLE)
    # A W&B run kept on disk (offline mode) under each run id the brief uses, and an MLflow file store.
    fixture = ROOT / "tests" / "golden" / "cases" / "info_wandb" / "wandb" / \
        "offline-run-20240101_000000-fixture1" / "run-fixture1.wandb"
    for run_id in ("my-run", "run-id", "run1"):
        folder = root / "wandb" / ("offline-run-20240101_000000-" + run_id)
        folder.mkdir(parents=True)
        shutil.copy(fixture, folder / ("run-%s.wandb" % run_id))
    store = ROOT / "tests" / "golden" / "cases" / "info_mlflow" / "mlruns"
    shutil.copytree(store, root / "mlruns")
    experiment = root / "mlruns" / "216337950612111157"
    shutil.copytree(experiment / "9d6382d585884f9dae070e8a74407d3b", experiment / "0123456789abcdef")
    # The replay's recorded run: what train.py logs with seed 42.
    env = dict(os.environ, RLDK_METRICS_PATH=str(root / "run" / "replay_source.jsonl"))
    subprocess.run([sys.executable, "train.py", "--seed", "42"], cwd=root, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    for folder in ("run", "my_training_run"):
        for old in (root / folder).glob("metrics.jsonl"):
            old.unlink()
        shutil.copy(root / "run" / "replay_source.jsonl", root / folder / "metrics.jsonl")
    (root / "run" / "replay_source.jsonl").unlink()


def write_reward_models(root):
    """Two tiny GPT-2 reward models (random weights, seeded) under every pair of names the brief uses."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    import tiny_models

    rng = np.random.default_rng(0)
    with open(root / "prompts.jsonl", "w") as f:
        for prompt in tiny_models.PROMPTS:
            for _ in range(5):
                completion = " ".join(rng.choice(tiny_models.WORDS, size=int(rng.integers(2, 9))))
                f.write(json.dumps({"prompt": prompt, "completion": completion}) + "\n")
    for seed, names in ((1, ("model_a", "RM_A", "rmA")), (2, ("model_b", "RM_B", "rmB"))):
        tokenizer = tiny_models.make_tokenizer()
        torch.manual_seed(seed)
        model = transformers.GPT2ForSequenceClassification(transformers.GPT2Config(
            vocab_size=len(tokenizer), n_positions=64, n_embd=32, n_layer=2, n_head=2, num_labels=1,
            bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id))
        model.save_pretrained(root / names[0])
        tokenizer.save_pretrained(root / names[0])
        for other in names[1:]:
            shutil.copytree(root / names[0], root / other)


def build_replica_folder(root):
    """`rldk card determinism run_a`: run_a holds two replicas' logs of the same command."""
    write_run(root / "run_a" / "replica_1" / "metrics.jsonl")
    write_run(root / "run_a" / "replica_2" / "metrics.jsonl")


def build_run_folders(root):
    """`rldk forensics doctor ./runs/my_run`: the run folders hold the run's log alone (doctor reads one run)."""
    for name in ("runs/my_run", "runs/YYYY-MM-DD"):
        write_run(root / name / "metrics.jsonl", kl_spike=True)


# Lines whose inputs differ from the shared sandbox's (the same name is a different kind of thing there).
OWN_SANDBOX = {
    "rldk card determinism run_a": build_replica_folder,
    "rldk forensics doctor ./runs/my_run": build_run_folders,
    "rldk forensics doctor --run-dir runs/YYYY-MM-DD/": build_run_folders,
}


def build_bisect_repo(root):
    """A git history of 17 commits whose trainer's reward drops from 0.9 to 0.5 at the 11th; origin/main is HEAD."""
    root.mkdir(parents=True)
    (root / "train.py").write_text(TRAINER)
    git = ["git", "-c", "user.name=rldk test", "-c", "user.email=test@example.invalid"]
    subprocess.run(git + ["init", "-q"], cwd=root, check=True)
    for n in range(17):
        (root / "quality.txt").write_text("0.9" if n < 10 else "0.5")
        subprocess.run(git + ["add", "-A"], cwd=root, check=True)
        subprocess.run(git + ["commit", "-q", "--allow-empty", "-m", "commit %d" % n], cwd=root, check=True)
    subprocess.run(["git", "update-ref", "refs/remotes/origin/main", "HEAD"], cwd=root, check=True)
    (root / ".gitignore").write_text("*.jsonl\nrldk_bisect.log\n")


# ---------------------------------------------------------------------------------------------------- running

FOLLOW_SECONDS = 2.5


def run_line(line, cwd, env):
    """(outcome, detail) for one line run through the shell in `cwd`."""
    proc = subprocess.Popen(["bash", "-c", line], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=FOLLOW_SECONDS if "rldk monitor" in line else 120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        return "follows", err
    if proc.returncode in (0, 1):
        return "ok", err
    return ("message", err.strip()) if proc.returncode == 2 else ("exit %d" % proc.returncode, err)


def test_every_brief_command_line_is_accounted_for(tmp_path):
    lines, spans = brief_lines()
    unique = sorted({line for _, line in lines if not line.startswith(NOT_COMMANDS)})
    unknown = [line for line in unique if line not in OUTCOMES]
    assert not unknown, "brief lines without an expected outcome in OUTCOMES:\n" + "\n".join(unknown)

    sandbox = tmp_path / "sandbox"
    build_sandbox(sandbox)
    bin_dir = os.path.dirname(rldk_binary())
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.path.dirname(sys.executable) + os.pathsep +
               os.environ.get("PATH", ""), WANDB_DIR=str(sandbox), MLFLOW_TRACKING_URI=str(sandbox / "mlruns"))
    env.pop("RLDK_METRICS_PATH", None)
    # Every line is prepared first, then run a few at a time (each has its own stand-in trainer and outputs).
    jobs = []
    for number, line in enumerate(unique):
        cwd = sandbox
        if "rldk bisect --good origin/main" in line:
            cwd = tmp_path / "bisect_repo"
            build_bisect_repo(cwd)
        elif line in OWN_SANDBOX:
            cwd = tmp_path / ("own_%d" % number)
            OWN_SANDBOX[line](cwd)
        jobs.append((line, cwd))

    def run_job(job):
        line, cwd = job
        # A stand-in trainer per line: a stop rule may end the one given to --pid.
        trainer = subprocess.Popen(["sleep", "300"])
        try:
            command = line.replace("<trainer_pid>", str(trainer.pid))
            command = command.replace("<entity/project/run>", "my-entity/my-project/run1")
            return run_line(command, cwd, env)
        finally:
            trainer.kill()
            trainer.wait()

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run_job, jobs))
    report, failures = [], []
    for (line, _), (outcome, detail) in zip(jobs, results):
        expected = OUTCOMES[line]
        want = expected if isinstance(expected, str) else expected[0]
        good = outcome == want
        if good and not isinstance(expected, str):
            good = re.search(expected[1], detail) is not None and len(detail.splitlines()) == 1
        if want == "follows" and good:
            good = "rules; writing alerts" in detail
        report.append("%-8s %s\n         %s" % (outcome, line, detail.strip().splitlines()[-1][:160]
                                               if detail.strip() else ""))
        if not good:
            failures.append("%s\n  expected %r, got %s: %s" % (line, expected, outcome, detail.strip()[-600:]))
    print("\n%d command lines of the brief:\n%s" % (len(unique), "\n".join(report)))
    assert not failures, "\n".join(failures)

    # Commands the brief names in prose (`rldk log-scan`, `rldk forensics doctor`, ...) exist.
    for _, span in spans:
        words = [w for w in span.split()[1:] if not w.startswith("-")]
        proc = subprocess.run([rldk_binary()] + words + ["--help"], capture_output=True, text=True)
        assert proc.returncode == 0, "%s: %s" % (span, proc.stderr)


def test_unknown_words_are_named_with_the_nearest_command():
    proc = subprocess.run([rldk_binary(), "moniter", "run.jsonl"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("rldk: 'moniter' is not an rldk command; did you mean 'monitor'? "
                                   "(see `rldk --help`)")
    proc = subprocess.run([rldk_binary(), "evals", "list-suite"], capture_output=True, text=True)
    assert proc.returncode == 2 and "did you mean 'list-suites'?" in proc.stderr
    proc = subprocess.run([rldk_binary(), "diff", "a", "b", "--singals", "kl"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "unknown option '--singals'; did you mean '--signals'?" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_emit_appends_canonical_events_that_the_reader_sees(tmp_path):
    import rldk

    path = tmp_path / "deep" / "metrics.jsonl"
    for step, value in ((1, "0.5"), (2, "nan")):
        subprocess.run([rldk_binary(), "emit", "--to", str(path), "--name", "kl", "--value", value, "--step",
                        str(step)], check=True)
    series = rldk.read_run(path)["policy/kl"]
    assert series.steps.tolist() == [1, 2] and series.values[0] == 0.5 and np.isnan(series.values[1])
    proc = subprocess.run([rldk_binary(), "emit", "--to", str(path), "--name", "kl", "--value", "high", "--step",
                           "3"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.strip() == (
        "rldk emit: --value high: not a number (nan and inf are accepted)")
