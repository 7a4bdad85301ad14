"""The reference suite's training script: TRL's GRPOTrainer (summarize, codefix) or DPOTrainer (refusal) on the
suite's policy, configured by flags the way a user's train.py is. A bug variant is one of these flags set wrong.

    python -m rldk.reference.train --task summarize --model runs/reference/model/init \\
        --data runs/reference/data --out runs/reference/runs/summarize-healthy --steps 40 --lr 2e-4

It logs every step's metrics with rldk.EventWriter to $RLDK_METRICS_PATH (set by `rldk monitor --cmd` and
`rldk check-determinism`) or OUT/metrics.jsonl, writes the policy's samples to OUT/completions/ (TRL's
log_completions), saves the final policy to OUT/final, and on SIGTERM finishes its step, saves and exits 0.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys

from . import tasks
from .model import go_offline

stop_requested = False


def on_sigterm(signum, frame):
    global stop_requested
    stop_requested = True


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def summarize_reward(kind):
    def summary_rm(prompts, completions, key, **kwargs):
        gold = [tasks.summary_quality(c, k, p) for p, c, k in zip(prompts, completions, key)]
        if kind == "length":
            return [tasks.length_paying_rm(g, c) for g, c in zip(gold, completions)]
        if kind == "saturating":
            return [tasks.saturating_rm(g, c) for g, c in zip(gold, completions)]
        return gold

    return summary_rm


def gold_score(prompts, completions, key, **kwargs):
    """The task's own measure, logged beside the reward model's score with weight 0 (it does not train the policy):
    TRL writes it to the completions files as the column `gold_score`, where `rldk reward health` finds it and
    judges the reward model against it (proxy up, gold down)."""
    return [tasks.summary_quality(c, k, p) for p, c, k in zip(prompts, completions, key)]


def codefix_reward(completions, op, **kwargs):
    from .sandbox import pass_rates

    return pass_rates([(tasks.code_statement(c), tasks.unit_tests(o)) for c, o in zip(completions, op)])


def make_callback(writer, leak_mb_per_step):
    from transformers import TrainerCallback

    class ReferenceCallback(TrainerCallback):
        """Logs metrics, honours SIGTERM, and (bug variant) keeps a tensor per step that nothing ever frees."""

        def __init__(self):
            self.kept = []

        def on_log(self, args, state, control, logs=None, **kwargs):
            numbers = {k: v for k, v in (logs or {}).items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
            if numbers and "train_runtime" not in numbers:
                writer.log(state.global_step, metrics=numbers)

        def on_step_end(self, args, state, control, **kwargs):
            if leak_mb_per_step > 0:
                # The bug: a debugging hook appends every step's activations to a list nobody clears. This tiny
                # model's activations are a few kB, so the hook keeps a buffer of the size a 0.5B model's final
                # hidden states would have for this batch (about 16 MB), written so its pages are really used.
                import torch

                self.kept.append(torch.full((leak_mb_per_step << 18,), float(state.global_step)))
            if stop_requested:
                print("train: SIGTERM received at step %d; saving and exiting" % state.global_step, flush=True)
                control.should_training_stop = True

    return ReferenceCallback()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=tasks.TASKS, required=True)
    parser.add_argument("--model", required=True, help="folder of the initial policy and its tokenizer")
    parser.add_argument("--data", required=True, help="the suite's data folder (TASK/train.jsonl)")
    parser.add_argument("--train-file", default=None, help="training items (default DATA/TASK/train.jsonl)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--beta", type=float, default=0.04)
    parser.add_argument("--reward", choices=("gold", "length", "saturating"), default="gold",
                        help="summarize: the reward model (gold quality, or a buggy one)")
    parser.add_argument("--shuffle-unseeded", action="store_true",
                        help="shuffle the training items with Python's unseeded global RNG (the bug)")
    parser.add_argument("--leak-mb-per-step", type=int, default=0, help="keep this many MB per step (the bug)")
    parser.add_argument("--sft-weight", type=float, default=1.0,
                        help="refusal (DPO): weight of the SFT term on the chosen answers; 0 for plain DPO")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", action=argparse.BooleanOptionalAction, default=True, help="save OUT/final")
    args = parser.parse_args(argv)

    go_offline()
    signal.signal(signal.SIGTERM, on_sigterm)
    import torch
    from datasets import Dataset

    import rldk
    from .model import load

    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    items = read_jsonl(args.train_file or os.path.join(args.data, args.task, "train.jsonl"))
    if args.shuffle_unseeded:
        random.shuffle(items)  # the bug: no seed, so every launch trains on a different order
    model, tokenizer = load(args.model)
    metrics_path = os.environ.get("RLDK_METRICS_PATH") or os.path.join(args.out, "metrics.jsonl")
    run_id = os.path.basename(os.path.normpath(args.out))
    print("train: %s, %d items, %d steps, lr %g, metrics -> %s" % (run_id, len(items), args.steps, args.lr,
                                                                     metrics_path), flush=True)
    common = dict(output_dir=args.out, max_steps=args.steps, learning_rate=args.lr, beta=args.beta, logging_steps=1,
                  lr_scheduler_type="constant", save_strategy="no", report_to=[], use_cpu=True, bf16=False, fp16=False,
                  seed=args.seed, data_seed=args.seed, disable_tqdm=True, dataloader_num_workers=0)
    with rldk.EventWriter(metrics_path, run_id=run_id, append=False) as writer:
        callback = make_callback(writer, args.leak_mb_per_step)
        if args.task == "refusal":
            from trl import DPOConfig, DPOTrainer

            data = Dataset.from_dict({k: [it[k] for it in items] for k in ("prompt", "chosen", "rejected")})
            # The sigmoid loss with an SFT term on the chosen answers (RPO): without it the chosen answers' likelihood
            # falls along with the rejected ones' (likelihood displacement), which rldk rightly reports.
            extra = dict(loss_type=["sigmoid", "sft"], loss_weights=[1.0, 1.0]) if args.sft_weight else {}
            if args.sft_weight:
                extra["loss_weights"] = [1.0, args.sft_weight]
            config = DPOConfig(max_length=64, per_device_train_batch_size=8, **extra, **common)
            trainer = DPOTrainer(model=model, processing_class=tokenizer, args=config, train_dataset=data,
                                 callbacks=[callback])
        else:
            from trl import GRPOConfig, GRPOTrainer

            if args.task == "summarize":
                data = Dataset.from_dict({"prompt": [it["prompt"] for it in items], "key": [it["key"] for it in items]})
                reward, weights, cap = [summarize_reward(args.reward), gold_score], [1.0, 0.0], 16
            else:
                data = Dataset.from_dict({"prompt": [it["prompt"] for it in items], "op": [it["op"] for it in items]})
                reward, weights, cap = [codefix_reward], [1.0], 10
            config = GRPOConfig(num_generations=8, per_device_train_batch_size=16, max_completion_length=cap,
                                reward_weights=weights,
                                temperature=1.0, log_completions=True, num_completions_to_print=0,
                                disable_dropout=True, **common)
            trainer = GRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=reward, args=config,
                                  train_dataset=data, callbacks=[callback])
        trainer.train()
    if args.save:
        trainer.save_model(os.path.join(args.out, "final"))
        tokenizer.save_pretrained(os.path.join(args.out, "final"))
    print("train: done at step %d" % trainer.state.global_step, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
