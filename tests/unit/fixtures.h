// Small, real-looking logs of every supported format, shared by the per-format reader tests and by the
// incremental-reading test (which feeds each of them byte by byte).
#pragma once

#include <string>

namespace rldk_test {

// Long-form events as EventWriter (and the Python EventWriter) write them.
inline const std::string LONG_FORM_JSONL =
    R"({"name":"kl","step":1,"time":"2024-01-01T00:00:00Z","value":0.1}
{"name":"kl","step":2,"time":1704067260000,"value":NaN}
{"name":"reward","step":2,"value":"0.5"}
{"name":"kl","step":3,"value":null}
{"name":"kl","step":4,"value":Infinity}
{"meta":{"host":"a"},"name":"kl","step":5,"tags":{"phase":"train"},"value":-Infinity}
{"name":"policy/kl","step":6,"value":0.2}
{"name":"my_metric","step":"7","value":1.5}
)";

// Wide records with nested objects, lists, text fields and W&B bookkeeping keys.
inline const std::string WIDE_JSONL =
    R"({"step": 1, "loss": 0.5, "actor": {"ppo_kl": 0.01, "entropy": 1.2}, "hist": [1, 2, 3], "phase": "train", "time": "2024-01-01T00:00:00Z"}
{"step": 2, "loss": NaN, "actor": {"ppo_kl": "0.02", "entropy": null}, "phase": "train", "done": true}
{"global_step": 3, "loss": 0.3, "_runtime": 12.5, "_timestamp": 1704067320}
)";

// verl's file logger: {"step": N, "data": {...}}.
inline const std::string VERL_JSONL =
    R"({"step": 1, "data": {"actor/ppo_kl": 0.01, "critic/score/mean": 0.5, "timing_s/step": 12.5, "training/epoch": 0}}
{"step": 2, "data": {"actor/ppo_kl": NaN, "critic/score/mean": 0.6, "timing_s/step": 11.0, "training/epoch": 0}}
)";

// HF Trainer's trainer_state.json (json.dumps(indent=2, sort_keys=True)) with train, eval and summary entries.
inline const std::string TRAINER_STATE_JSON = R"({
  "best_metric": null,
  "best_model_checkpoint": null,
  "epoch": 1.0,
  "eval_steps": 10,
  "global_step": 20,
  "is_hyper_param_search": false,
  "log_history": [
    {
      "epoch": 0.5,
      "grad_norm": 1.5,
      "learning_rate": 1e-05,
      "loss": 0.6931,
      "step": 10
    },
    {
      "epoch": 0.5,
      "eval_loss": 0.7,
      "eval_runtime": 1.25,
      "step": 10
    },
    {
      "epoch": 1.0,
      "grad_norm": Infinity,
      "learning_rate": 5e-06,
      "loss": NaN,
      "step": 20
    },
    {
      "epoch": 1.0,
      "step": 20,
      "total_flos": 1234.0,
      "train_loss": 0.6,
      "train_runtime": 12.5,
      "train_samples_per_second": 3.2,
      "train_steps_per_second": 1.6
    }
  ],
  "logging_steps": 10,
  "max_steps": 20,
  "num_train_epochs": 1,
  "trial_name": null,
  "trial_params": null
}
)";

// A CSV whose writer discovered a new key mid-run (header rewritten) and leaves cells empty when a key is missing.
inline const std::string CSV_WITH_HEADER_CHANGE =
    "step,loss,kl\n"
    "1,0.5,0.1\n"
    "2,0.4,\n"
    "step,loss,kl,reward\n"
    "3,0.3,0.05,1.0\n"
    "4,nan,,inf\n"
    "5,\" 0.2 \",,-inf\n";

inline const std::string TSV = "step\tloss\tkl\n1\t0.5\t0.1\n2\t0.4\tNaN\n3\t\t0.3\n";

// HF/TRL console output: print(dict) per log call, tqdm bars in between (one redrawn with a carriage return).
inline const std::string HF_CONSOLE =
    "{'loss': 0.6931, 'grad_norm': 1.25, 'learning_rate': 1e-06, 'epoch': 0.01}\n"
    "  5%|\xE2\x96\x8C         | 1/20 [00:01<00:19,  1.00s/it]\n"
    "{'loss': nan, 'grad_norm': inf, 'learning_rate': 2e-06, 'epoch': 0.02}\n"
    "{'eval_loss': 0.7, 'eval_runtime': 1.0, 'epoch': 0.02}\n"
    " 10%|\xE2\x96\x88         | 2/20 [00:02<00:18,  1.00s/it]\r{'loss': 0.5, 'grad_norm': 0.9, "
    "'learning_rate': 3e-06, 'epoch': 0.03}\n"
    "{'train_runtime': 10.0, 'train_samples_per_second': 2.0, 'train_steps_per_second': 1.0, 'train_loss': 0.6, "
    "'epoch': 0.03}\n"
    "{'loss': 0.5, 'grad_norm': }\n";

// OpenRLHF console output.
inline const std::string OPENRLHF_CONSOLE =
    "INFO 08-13 19:01:45 ppo_trainer.py:547] \xE2\x9C\xA8 Global step 1: {'policy_loss': 0.00082, 'actor_lr': 1e-06, "
    "'actor_grad_norm': 0.3232, 'kl': 0.001, 'reward': 0.12, 'response_length': 402.0, 'truncated': 0.0, "
    "'ppo_clip_ratio': 0.01, 'timing/step_total': 94.08}\n"
    "Episode [1/1]:  10%|\xE2\x96\x88         | 1/10 [01:34<14:06, 94.08s/it, policy_loss=0.00082, kl=0.001]\n"
    "INFO 08-13 19:02:45 ppo_trainer.py:547] \xE2\x9C\xA8 Global step 2: {'policy_loss': nan, 'actor_lr': 1e-06, "
    "'actor_grad_norm': inf, 'kl': 0.002, 'reward': 0.14, 'response_length': 404.0, 'truncated': 0.0, "
    "'ppo_clip_ratio': 0.01, 'timing/step_total': 95.82}\n"
    "INFO 08-13 19:03:00 ppo_trainer.py:600] Evaluating at global_step 2, eval_metrics: {'eval_reward': 0.4}\n"
    "INFO 08-13 19:04:45 ppo_trainer.py:547] \xE2\x9C\xA8 Global step 3: {'policy_loss': 0.01, 'kl': 0.003\n";

// verl console output through Ray, with numpy wrappers.
inline const std::string VERL_CONSOLE =
    "(TaskRunner pid=3165) Using LocalLogger is deprecated.\n"
    "Training Progress:   0%|          | 0/60\n"
    "(TaskRunner pid=3165) step:1 - global_seqlen/min:69010 - actor/entropy:0.5964 - "
    "actor/kl_loss:np.float64(0.001) - actor/pg_loss:np.float64(-0.025) - actor/ppo_kl:np.float64(0.0003) - "
    "critic/score/mean:-0.4964 - response_length/mean:318.997 - training/global_step:1 - training/epoch:0 - "
    "timing_s/step:12.5\n"
    "(main_task pid=63313, ip=10.0.0.1) step:2 - actor/entropy:nan - actor/ppo_kl:np.float64(inf) - "
    "critic/score/mean:-0.48 - training/global_step:2 - training/epoch:0 - timing_s/step:12.0 - val/note:abc\n"
    "step:3 - actor/entropy:0.55 - critic/score/mean:-0.47 - training/global_step:3\n";

// Generic key=value lines (a hand-rolled print loop), one of them restarting from an earlier step.
inline const std::string KEY_VALUE_CONSOLE =
    "Starting training run\n"
    "step=10 kl=0.12 reward_mean=0.5\n"
    "step=11, kl=nan; reward_mean=inf | lr=1e-05\n"
    "kl=0.2 reward_mean=0.7\n"
    "global_step=20 loss=0.1\n"
    "step=5 kl=0.3\n"
    "Namespace args --lr=0.5 --kl_coef=0.1\n"
    "\x1b[32mstep=30 kl=0.4\x1b[0m\n";

}  // namespace rldk_test
