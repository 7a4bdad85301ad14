"""RLDKCallback inside real trainers: TRL's GRPOTrainer and a plain transformers Trainer, on a tiny randomly
initialised GPT-2 on CPU (tests/python/tiny_models.py; nothing is downloaded). Each run takes a few seconds."""
import json
import math
import os
import subprocess

import numpy as np
import pytest

import tiny_models  # noqa: F401  (sets the offline environment before transformers is imported)
from conftest import ROOT, write
from test_cli import rldk_binary

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
trl = pytest.importorskip("trl")

import rldk  # noqa: E402
from rldk.integrations import TrainingStopped  # noqa: E402
from rldk.integrations.trl import RLDKCallback, auto_preset  # noqa: E402

# Per-token entropy of a 30-word vocabulary starts near log(30) = 3.4 nats; an absurd learning rate saturates the
# logits after one update and drives it to 0. The rule stops the run on the second such step.
COLLAPSE_RULES = """\
rules:
  - id: entropy_collapsed
    description: Per-token entropy near zero for 2 logged steps (the policy became deterministic).
    metric: policy/entropy
    condition: value < 0.05
    window: {size: 2, kind: consecutive}
    actions:
      - warn: {msg: "entropy {value:.3f} at step {step}"}
      - stop: {msg: "policy collapsed at step {step}"}
"""


def grpo_trainer(tmp_path, callback, max_steps=4, learning_rate=1e-4, report_to="none"):
    from trl import GRPOConfig, GRPOTrainer

    tokenizer = tiny_models.make_tokenizer()
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"), max_steps=max_steps, per_device_train_batch_size=4, num_generations=2,
        max_completion_length=8, learning_rate=learning_rate, logging_steps=1, save_strategy="no",
        report_to=report_to, use_cpu=True, bf16=False, fp16=False, disable_tqdm=True, seed=0,
        dataloader_num_workers=0)
    return GRPOTrainer(model=tiny_models.make_model(tokenizer), processing_class=tokenizer,
                       reward_funcs=tiny_models.word_count_reward, args=args, train_dataset=tiny_models.prompt_dataset(),
                       callbacks=[callback] if callback else None)


def train_logs(trainer):
    """The per-step entries of log_history (not the end-of-training summary)."""
    return [e for e in trainer.state.log_history if "train_runtime" not in e]


def report_schema():
    with open(ROOT / "docs" / "schemas" / "rldk.monitor-report.v1.schema.json") as f:
        return json.load(f)


def test_grpo_metrics_arrive_under_canonical_names(tmp_path):
    callback = RLDKCallback()  # preset="auto": grpo_safe for a GRPOConfig
    trainer = grpo_trainer(tmp_path, callback, max_steps=3)
    trainer.train()
    logs = train_logs(trainer)
    assert [e["step"] for e in logs] == [1, 2, 3]
    assert callback.session.monitor.rule_ids[0].startswith("grpo_safe_")

    run = rldk.read_run(callback.metrics_path)
    # GRPO's own names, mapped by the metric dictionary (a name missing there would show up under its raw name).
    expected = {"reward": "reward/mean", "reward_std": "reward/std", "entropy": "policy/entropy",
                "grad_norm": rldk.canonical_name("grad_norm"), "completions/mean_length": "response/length_mean",
                "completions/clipped_ratio": rldk.canonical_name("completions/clipped_ratio"),
                "frac_reward_zero_std": rldk.canonical_name("frac_reward_zero_std")}
    for raw, canonical in expected.items():
        assert canonical != raw or "/" in raw, "%s has no canonical name" % raw
        assert canonical in run.metrics, (canonical, run.metrics)
        series = run[canonical]
        assert series.steps.tolist() == [e["step"] for e in logs]
        assert series.values.tolist() == [e[raw] for e in logs]  # exactly: the events keep full precision
    for name in run.metrics:
        assert rldk.canonical_name(name) == name  # every name in the event log is already canonical
    assert "reward" not in run.metrics and "entropy" not in run.metrics

    with open(callback.report_path) as f:
        report = json.load(f)
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(report, report_schema())
    numbers = sum(1 for e in trainer.state.log_history for k, v in e.items()
                  if k != "step" and (v is None or isinstance(v, (int, float))))  # None is observed as NaN
    assert report["summary"]["observations"] == numbers
    assert report["summary"]["stop_requested"] is False and report["summary"]["exit_code"] == 0
    assert trainer.state.global_step == 3


def test_absurd_learning_rate_stops_grpo_early_with_the_alert_in_the_report(tmp_path):
    rules = write(tmp_path / "rules.yaml", COLLAPSE_RULES)
    callback = RLDKCallback(preset=None, rules=str(rules), out_dir=str(tmp_path / "guard"))
    trainer = grpo_trainer(tmp_path, callback, max_steps=10, learning_rate=1e3)
    trainer.train()
    entropies = [e["entropy"] for e in train_logs(trainer)]
    assert entropies[0] > 1.0 and entropies[-1] < 0.05  # the injected failure really happened

    assert trainer.state.global_step < 10  # stopped early ...
    alert = callback.stop_alert
    assert alert["rule_id"] == "entropy_collapsed" and alert["metric"] == "policy/entropy"
    assert trainer.state.global_step == alert["step"]  # ... at the step the rule fired
    with open(tmp_path / "guard" / "report.json") as f:
        report = json.load(f)
    assert report["summary"]["stop_requested"] is True and report["summary"]["exit_code"] == 1
    assert report["rules"]["entropy_collapsed"]["activations"] == 1
    assert report["rules"]["entropy_collapsed"]["first_activation"]["step"] == alert["step"]
    actions = [(r["action"], r["rule_id"], r["step"], r["status"]) for r in report["alerts"]]
    assert actions == [("warn", "entropy_collapsed", alert["step"], "ok"),
                       ("stop", "entropy_collapsed", alert["step"], "ok")]
    assert report["alerts"][0]["message"] == "entropy %.3f at step %d" % (alert["value"], alert["step"])
    lines = (tmp_path / "guard" / "alerts.jsonl").read_text().splitlines()
    assert [json.loads(line)["action"] for line in lines] == ["warn", "stop"]


def test_report_to_tensorboard_is_read_back_with_trainer_state_values(tmp_path):
    callback = RLDKCallback()
    trainer = grpo_trainer(tmp_path, callback, max_steps=3, report_to="tensorboard")
    trainer.train()
    trainer.save_state()
    out = tmp_path / "out"
    event_files = [os.path.join(d, f) for d, _, files in os.walk(out / "runs") for f in files
                   if f.startswith("events.out.tfevents")]
    assert event_files, "transformers wrote no TensorBoard event file under %s" % (out / "runs")

    def info(path):
        proc = subprocess.run([rldk_binary(), "info", "--json", str(path)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        (entry,) = json.loads(proc.stdout)["runs"]
        return entry

    tb = info(os.path.dirname(event_files[0]))
    state = info(out / "trainer_state.json")
    # The output_dir holds the log three times (events, state file, the callback's metrics.jsonl): one run, the
    # callback's; without the callback's folder, the events.
    def sources(folder):
        listed = subprocess.run([rldk_binary(), "info", "--json", str(folder)], capture_output=True, text=True,
                                check=True)
        return [run["source"] for run in json.loads(listed.stdout)["runs"]]

    assert sources(out) == [str(out / "rldk" / "metrics.jsonl")]
    (out / "rldk" / "report.json").unlink()
    (out / "rldk" / "metrics.jsonl").rename(tmp_path / "metrics.jsonl")
    assert sources(out) == [tb["source"]]
    with open(out / "trainer_state.json") as f:
        history = json.load(f)["log_history"]
    # TensorBoard keeps scalars as float32; trainer_state.json keeps the Python floats.
    f32 = np.float32
    checked = 0
    for raw in {k for e in history for k in e if k != "step"}:
        logged = [(e["step"], e[raw]) for e in history if isinstance(e.get(raw), (int, float))]
        if not logged:
            continue
        # HF's TensorBoard callback logs "train/<key>" (rewrite_logs); rldk drops that prefix for the names its
        # dictionary knows and keeps it on the others, as it keeps every unknown name as logged.
        tb_name = rldk.canonical_name("train/" + raw)
        assert tb_name in tb["metrics"], "%s (%s) missing from the TensorBoard run" % (tb_name, raw)
        got, want = tb["metrics"][tb_name], state["metrics"][rldk.canonical_name(raw)]
        assert got["count"] == want["count"] == len(logged), name
        assert got["first_step"] == logged[0][0] and got["last_step"] == logged[-1][0], name
        assert f32(got["last"]) == f32(logged[-1][1]), name
        assert f32(got["min"]) == f32(min(v for _, v in logged)) == f32(want["min"]), name
        assert f32(got["max"]) == f32(max(v for _, v in logged)) == f32(want["max"]), name
        checked += 1
    assert checked >= 15  # GRPO logs some twenty metrics per step

    # Every value, not only the summary: rldk ingest writes the TensorBoard run as canonical events.
    canon = tmp_path / "tb.jsonl"
    subprocess.run([rldk_binary(), "ingest", os.path.dirname(event_files[0]), "-o", str(canon)], check=True)
    run = rldk.read_run(canon)
    for raw in ("reward", "entropy", "grad_norm", "loss"):
        logged = [(e["step"], e[raw]) for e in history if raw in e]
        series = run[rldk.canonical_name("train/" + raw)]
        assert series.steps.tolist() == [s for s, _ in logged]
        assert [f32(v) for v in series.values.tolist()] == [f32(v) for _, v in logged]


def test_plain_transformers_trainer_is_stopped_by_a_rule(tmp_path):
    from transformers import Trainer, TrainingArguments

    tokenizer = tiny_models.make_tokenizer()
    # A learning rate of 100 blows the loss up from ~2.5 to ~1e5 after the first update.
    args = TrainingArguments(output_dir=str(tmp_path / "out"), max_steps=8, per_device_train_batch_size=4,
                             learning_rate=1e2, logging_steps=1, save_strategy="no", report_to="none",
                             use_cpu=True, disable_tqdm=True, seed=0)
    assert auto_preset(args) == "grpo_safe"
    rules_yaml = """\
rules:
  - id: loss_explosion
    description: Training loss up more than 10x from one logged step to the next.
    metric: train/loss
    condition: last(value) > 10 * first(value)
    window: {size: 2, kind: rolling}
    actions: [warn, stop]
"""
    callback = RLDKCallback(preset=None, rules_yaml=rules_yaml, save_on_stop=True)
    trainer = Trainer(model=tiny_models.make_model(tokenizer), args=args,
                      train_dataset=tiny_models.lm_dataset(tokenizer), callbacks=[callback])
    trainer.train()
    losses = [e["loss"] for e in train_logs(trainer)]
    assert trainer.state.global_step == 2 and losses[1] > 10 * losses[0]
    assert callback.stop_alert["rule_id"] == "loss_explosion" and callback.stop_alert["step"] == 2
    assert os.path.isdir(tmp_path / "out" / "checkpoint-2")  # save_on_stop checkpointed the step it stopped at
    run = rldk.read_run(callback.metrics_path)
    assert run["train/loss"].values.tolist() == losses
    with open(callback.report_path) as f:
        assert json.load(f)["summary"]["stop_requested"] is True


def test_trainer_that_ignores_the_stop_flag_gets_the_exception(tmp_path):
    """A custom loop drives the real transformers CallbackHandler the way TRL's old PPOTrainer did: on_step_end
    and on_log every step, never looking at control.should_training_stop."""
    from transformers import TrainerControl, TrainerState, TrainingArguments
    from transformers.trainer_callback import CallbackHandler

    # objective/kl is TRL PPO's sequence-summed KL (policy/kl_seq).
    rules_yaml = "rules:\n  - {id: kl_blowup, metric: policy/kl_seq, condition: value > 1.0, actions: [warn, stop]}\n"
    callback = RLDKCallback(preset=None, rules_yaml=rules_yaml)
    args = TrainingArguments(output_dir=str(tmp_path / "out"), report_to="none", use_cpu=True)
    tokenizer = tiny_models.make_tokenizer()
    handler = CallbackHandler([callback], tiny_models.make_model(tokenizer), tokenizer, None, None)
    state, control = TrainerState(max_steps=10), TrainerControl()
    handler.on_train_begin(args, state, control)
    steps_taken = []
    with pytest.raises(TrainingStopped) as info:
        for step in range(1, 11):
            state.global_step = step
            steps_taken.append(step)
            handler.on_step_end(args, state, control)
            handler.on_log(args, state, control, {"objective/kl": 0.1 if step < 4 else 2.5, "lr": 1e-5})
    stop = info.value
    assert control.should_training_stop is True  # asked politely first ...
    assert steps_taken == [1, 2, 3, 4, 5]  # ... then raised at the next step the loop took
    assert stop.step == 4 and stop.alert["rule_id"] == "kl_blowup" and stop.alert["value"] == 2.5
    assert "kl_blowup at step 4" in str(stop) and "does not read that flag" in str(stop)
    with open(stop.report_path) as f:
        report = json.load(f)
    assert report["summary"]["stop_requested"] is True
    assert report["rules"]["kl_blowup"]["first_activation"]["step"] == 4


def test_raise_always_and_option_errors(tmp_path):
    from transformers import TrainerControl, TrainerState, TrainingArguments

    callback = RLDKCallback(preset=None, rules_yaml="rules:\n  - {id: r, metric: reward/mean, condition: isnan(value),"
                                                    " actions: [stop]}\n", raise_on_stop="always")
    args = TrainingArguments(output_dir=str(tmp_path / "out"), report_to="none", use_cpu=True)
    state, control = TrainerState(), TrainerControl()
    callback.on_train_begin(args, state, control)
    state.global_step = 1
    callback.on_log(args, state, control, {"reward": 0.5, "note": "text"})
    state.global_step = 2
    with pytest.raises(TrainingStopped) as info:
        callback.on_log(args, state, control, {"reward": None})  # GRPO's way of logging an all-NaN window
    assert math.isnan(info.value.alert["value"]) and info.value.step == 2
    assert "raise_on_stop" in str(info.value)

    with pytest.raises(ValueError, match="raise_on_stop"):
        RLDKCallback(raise_on_stop="sometimes")
    with pytest.raises(ValueError, match="preset=, rules= or rules_yaml="):
        RLDKCallback(preset=None)
    bad = RLDKCallback(preset="no_such_preset")
    with pytest.raises(rldk.RldkError, match="no_such_preset"):
        bad.on_train_begin(args, TrainerState(), TrainerControl())


def test_monitor_session_for_a_hand_written_loop(tmp_path):
    from rldk.integrations import MonitorSession

    rules_yaml = "rules:\n  - {id: kl_high, metric: policy/kl, condition: value > 0.3, actions: [warn, stop]}\n"
    session = MonitorSession(tmp_path / "guard", rules_yaml=rules_yaml, run_id="loop")
    kls = [0.1, 0.2, 0.25, 0.45, 0.5]
    for step, kl in enumerate(kls, 1):
        session.log(step, {"kl": kl, "train/reward": 0.5, "note": "text", "missing": None})
        if session.stop_alert:
            break
    assert step == 4 and session.stop_alert["value"] == 0.45
    report_path = session.finish()
    run = rldk.read_run(session.metrics_path)
    # Strings are left out; None is NaN, as GRPO means it (every value of the window was NaN).
    assert run.run_id == "loop" and run.metrics == ["missing", "policy/kl", "reward/mean"]
    assert run["policy/kl"].values.tolist() == kls[:4]
    assert run["missing"].non_finite_count == 4
    with open(report_path) as f:
        assert json.load(f)["summary"]["observations"] == 12

    assert session.monitor.session_report(fail_on="never")["summary"]["exit_code"] == 0
    with pytest.raises(rldk.InvalidArgumentError, match="fail_on"):
        session.monitor.session_report(fail_on="sometimes")

    quiet = MonitorSession(None, rules_yaml=rules_yaml)  # another rank: rules only, no files
    assert quiet.log(1, {"kl": 0.9})[0]["rule_id"] == "kl_high"
    assert quiet.finish() is None and quiet.metrics_path is None
