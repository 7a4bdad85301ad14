"""Writes the bundled example runs (deterministic). Each is a real-looking log in the format a trainer writes.

  grpo_trl/trainer_state.json   TRL GRPOTrainer: train, eval and summary entries; KL runs away after step 220
  grpo_trl/console.log          the same run as the HF console prints it (dict reprs, tqdm noise)
  ppo_events.jsonl.gz           canonical long-form events (EventWriter format), a restart at step 150, gzip
  verl_console.log              verl console lines with Ray prefixes and np.float64(...) values; NaN collapse at the end
  openrlhf_console.log          OpenRLHF "Global step N: {...}" lines
  sb3_progress.csv              stable-baselines3 progress.csv whose header grows mid-file

Run: python3 examples/make_examples.py
"""
import gzip
import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def grpo_metrics(step, rng):
    runaway = max(0, step - 220)
    kl = 0.002 + 0.0004 * step + 0.00002 * runaway ** 2 * 10 + abs(rng.gauss(0, 0.002))
    reward = 0.2 + 0.6 * (1 - math.exp(-step / 120)) + rng.gauss(0, 0.03)
    entropy = max(0.05, 0.9 * math.exp(-step / 400) - 0.004 * runaway + rng.gauss(0, 0.01))
    length = 180 + 0.3 * step + rng.gauss(0, 6)
    return {
        "clip_ratio/high_max": 0.0, "clip_ratio/high_mean": 0.0, "clip_ratio/low_mean": 0.0,
        "clip_ratio/low_min": 0.0, "clip_ratio/region_mean": 0.0,
        "completions/clipped_ratio": round(min(1.0, max(0.0, (length - 300) / 100)), 4),
        "completions/max_length": 256.0 if length > 256 else round(length + 40, 1),
        "completions/mean_length": round(length, 2), "completions/min_length": round(length - 90, 1),
        "entropy": round(entropy, 5), "frac_reward_zero_std": round(max(0.0, 0.3 - step / 1000), 3),
        "grad_norm": round(0.3 + abs(rng.gauss(0, 0.05)) + (4.0 if step == 170 else 0.0), 5),
        "kl": round(kl, 6), "learning_rate": 1e-06 * min(1.0, step / 20),
        "loss": round(0.04 * kl, 4), "num_tokens": 4096.0 * step,
        "reward": round(reward, 4), "reward_std": round(0.3 + rng.gauss(0, 0.02), 4),
        "rewards/accuracy_reward/mean": round(reward, 4), "rewards/accuracy_reward/std": round(0.4, 4),
        "step_time": round(12.0 + rng.gauss(0, 0.5), 3),
    }


def write_trl(rng):
    os.makedirs(os.path.join(HERE, "grpo_trl"), exist_ok=True)
    history, console = [], []
    for step in range(10, 301, 10):
        m = grpo_metrics(step, rng)
        m["epoch"] = round(step / 300, 4)
        history.append(dict(m, step=step))
        console.append(" 33%%|███▎      | %d/300 [02:01<04:02,  1.21s/it]\r" % step + repr(m))
        if step % 100 == 0:
            ev = {"eval_loss": round(0.03 + step / 10000, 4), "eval_reward": round(0.3 + step / 600, 4),
                  "eval_runtime": 12.5, "eval_samples_per_second": 8.0, "eval_steps_per_second": 1.0,
                  "epoch": round(step / 300, 4)}
            history.append(dict(ev, step=step))
            console.append(repr(ev))
    summary = {"epoch": 1.0, "step": 300, "total_flos": 0.0, "train_loss": 0.0123, "train_runtime": 3601.2,
               "train_samples_per_second": 0.67, "train_steps_per_second": 0.083}
    history.append(summary)
    console.append(repr({k: v for k, v in summary.items() if k != "step"}))
    state = {"best_global_step": None, "best_metric": None, "best_model_checkpoint": None, "epoch": 1.0,
             "eval_steps": 100, "global_step": 300, "is_hyper_param_search": False, "is_local_process_zero": True,
             "is_world_process_zero": True, "log_history": history, "logging_steps": 10, "max_steps": 300,
             "num_input_tokens_seen": 0, "num_train_epochs": 1, "save_steps": 500, "total_flos": 0.0,
             "train_batch_size": 8, "trial_name": None, "trial_params": None}
    with open(os.path.join(HERE, "grpo_trl", "trainer_state.json"), "w") as f:
        f.write(json.dumps(state, indent=2, sort_keys=True))
    with open(os.path.join(HERE, "grpo_trl", "console.log"), "w") as f:
        f.write("Loading checkpoint shards: 100%|██████████| 2/2\n" + "\n".join(console) + "\n")


def write_events(rng):
    lines = []
    t0 = 1767225600.0  # 2026-01-01T00:00:00Z
    steps = list(range(0, 200)) + list(range(150, 260))  # resumed from a checkpoint at step 150
    for i, step in enumerate(steps):
        kl = 0.04 + 0.01 * math.sin(step / 30) + rng.gauss(0, 0.003)
        values = {"kl_mean": kl, "reward_mean": 0.5 + step / 600 + rng.gauss(0, 0.02),
                  "entropy_mean": 2.0 - step / 500 + rng.gauss(0, 0.01), "grad_norm": abs(rng.gauss(0.5, 0.1)),
                  "clip_frac": abs(rng.gauss(0.08, 0.01))}
        if i == 230:
            values["grad_norm"] = float("nan")
        t = t0 + i * 3.0
        for name, value in values.items():
            stamp = "%sZ" % __import__("datetime").datetime.fromtimestamp(t, __import__("datetime").timezone.utc).replace(tzinfo=None).isoformat(timespec="milliseconds")
            lines.append(json.dumps({"name": name, "run_id": "ppo-7b-lr3e-6", "step": step, "time": stamp,
                                     "value": round(value, 6) if math.isfinite(value) else value},
                                    sort_keys=True))
    with gzip.GzipFile(os.path.join(HERE, "ppo_events.jsonl.gz"), "wb", mtime=0) as f:
        f.write(("\n".join(lines) + "\n").encode())


def write_verl(rng):
    out = ["(TaskRunner pid=3165) Using LocalLogger is deprecated.", "Training Progress:   0%|          | 0/60"]
    for step in range(1, 61):
        broken = step >= 57
        vals = [("global_seqlen/min", "%d" % (69000 + step * 10)),
                ("actor/entropy", "nan" if broken else repr(0.6 - step * 0.004 + rng.gauss(0, 0.005))),
                ("actor/kl_loss", "np.float64(nan)" if broken else "np.float64(%r)" % (0.001 * step)),
                ("actor/pg_loss", "np.float64(nan)" if broken else "np.float64(%r)" % rng.gauss(0, 0.02)),
                ("actor/pg_clipfrac", "np.float64(%r)" % abs(rng.gauss(0.004, 0.001))),
                ("actor/ppo_kl", "np.float64(%r)" % abs(rng.gauss(0.0002, 0.0001))),
                ("actor/grad_norm", "nan" if step >= 56 else repr(abs(rng.gauss(0.2, 0.03)))),
                ("critic/score/mean", "-1.0" if broken else repr(round(-0.5 + step / 60 + rng.gauss(0, 0.05), 6))),
                ("response_length/mean", "257.0" if broken else repr(round(300 + rng.gauss(0, 10), 3))),
                ("response_length/clip_ratio", "1.0" if broken else repr(round(abs(rng.gauss(0.02, 0.01)), 4))),
                ("training/global_step", str(step)), ("training/epoch", str(step // 30)),
                ("perf/throughput", repr(1200 + rng.gauss(0, 20)))]
        out.append("(TaskRunner pid=3165) step:%d - " % step + " - ".join("%s:%s" % kv for kv in vals))
        out.append("Training Progress:  %d%%|█    | %d/60 [01:00<05:00, 12.1s/it]" % (step * 100 // 60, step))
    with open(os.path.join(HERE, "verl_console.log"), "w") as f:
        f.write("\n".join(out) + "\n")


def write_openrlhf(rng):
    out = []
    for step in range(1, 41):
        status = {"policy_loss": round(rng.gauss(0, 0.02), 5), "actor_lr": 1e-06, "actor_grad_norm":
                  round(abs(rng.gauss(0.3, 0.05)), 4), "kl": round(0.001 * step, 5), "reward":
                  round(0.1 + step / 50, 4), "response_length": round(400 + step * 2.0, 1), "total_length":
                  round(600 + step * 2.0, 1), "truncated": 0.0, "ppo_clip_ratio": 0.01,
                  "timing/step_total": round(95 + rng.gauss(0, 2), 2)}
        out.append("INFO 08-13 19:%02d:45 ppo_trainer.py:547] \u2728 Global step %d: %r" % (step % 60, step, status))
        if step % 20 == 0:
            out.append("INFO 08-13 19:%02d:50 ppo_trainer.py:594] \u2728 Evaluation completed in 0:01:02, "
                       "global_step %d, eval_metrics: %r" % (step % 60, step, {"eval_math_pass1": 0.31 + step / 400}))
    with open(os.path.join(HERE, "openrlhf_console.log"), "w") as f:
        f.write("\n".join(out) + "\n")


def write_sb3():
    rows = ["time/total_timesteps,rollout/ep_rew_mean,time/fps"]
    for i in range(1, 6):
        rows.append("%d,%.2f,%d" % (i * 2048, i * 1.5, 900))
    rows.append("time/total_timesteps,rollout/ep_rew_mean,time/fps,train/approx_kl,train/clip_fraction")
    for i in range(6, 11):
        rows.append("%d,%.2f,%d,%.4f,%.3f" % (i * 2048, i * 1.5, 900, 0.01 + i / 1000, 0.1))
    with open(os.path.join(HERE, "sb3_progress.csv"), "w") as f:
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    write_trl(random.Random(1))
    write_events(random.Random(2))
    write_verl(random.Random(3))
    write_openrlhf(random.Random(4))
    write_sb3()
