"""GRPO with TRL, guarded by rldk in process: RLDKCallback stops the run when a rule with a stop action fires.

    python examples/integrations/trl_grpo_callback.py                     # tiny random model, runs offline on CPU
    python examples/integrations/trl_grpo_callback.py --learning-rate 1e3 # a blown-up run: stopped at step 3 of 8
    python examples/integrations/trl_grpo_callback.py --model Qwen/Qwen2.5-0.5B-Instruct --max-steps 200

Afterwards: <output-dir>/rldk/report.json (alerts and rule activations), <output-dir>/rldk/metrics.jsonl (every
logged value under its canonical name; `rldk info` / `rldk monitor --once` read it).
"""
import argparse
import os
import pathlib
import sys

from rldk.integrations import TrainingStopped
from rldk.integrations.trl import RLDKCallback

# The guard for the --learning-rate 1e3 demo: the policy's per-token entropy collapsing to zero. The built-in
# presets hold their fire for a dozen steps (grace_steps) so early noise does not stop a healthy run.
COLLAPSE_RULE = """\
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


def load_policy(model_name):
    if model_name:
        from transformers import AutoModelForCausalLM, AutoTokenizer
        tokenizer = AutoTokenizer.from_pretrained(model_name)
        tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
        return AutoModelForCausalLM.from_pretrained(model_name), tokenizer
    # No model given: the tiny randomly initialised GPT-2 and in-memory tokenizer of rldk's own tests (nothing is
    # downloaded), so the example runs anywhere in seconds.
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "python"))
    import tiny_models
    tokenizer = tiny_models.make_tokenizer()
    return tiny_models.make_model(tokenizer), tokenizer


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="hub name or local path (default: a tiny random model, offline)")
    parser.add_argument("--output-dir", default="runs/trl_grpo_rldk")
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--learning-rate", type=float, default=1e-5)
    parser.add_argument("--preset", default="grpo_safe")
    parser.add_argument("--report-to", default="tensorboard", help="also write TensorBoard events (rldk reads them)")
    args = parser.parse_args()

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    model, tokenizer = load_policy(args.model)
    prompts = ["the cat sat on the", "a dog ran under a", "one two three", "the big red"] * 8

    def concise_reward(completions, **kwargs):
        # Prefers short answers: a simple, verifiable reward in the spirit of GRPO's rule-based rewards.
        return [1.0 / (1 + len(text.split())) for text in completions]

    config = GRPOConfig(output_dir=args.output_dir, max_steps=args.max_steps, per_device_train_batch_size=4,
                        num_generations=2, max_completion_length=8, learning_rate=args.learning_rate,
                        logging_steps=1, save_strategy="no", report_to=args.report_to,
                        use_cpu=args.model is None, bf16=False, fp16=False)
    guard = RLDKCallback(preset=args.preset, rules_yaml=COLLAPSE_RULE, save_on_stop=args.model is not None)
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=concise_reward, args=config,
                          train_dataset=Dataset.from_dict({"prompt": prompts}), callbacks=[guard])
    try:
        trainer.train()
    except TrainingStopped as stop:  # only for trainers that ignore control.should_training_stop
        print("stopped by rldk:", stop)
    print("steps run: %d of %d" % (trainer.state.global_step, args.max_steps))
    if guard.stop_alert:
        print("stopped at step %d by %s" % (guard.stop_alert["step"], guard.stop_alert["rule_id"]))
    print("report:", os.path.relpath(guard.report_path))
    print("events:", os.path.relpath(guard.metrics_path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
