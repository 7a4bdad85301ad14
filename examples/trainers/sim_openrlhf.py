"""A simulated OpenRLHF PPO/GRPO run that prints its metrics exactly the way OpenRLHF does, for `rldk monitor --cmd`.

OpenRLHF has no metrics file of its own: each global step its trainer logs the `status` dict through Python logging
("INFO 08-13 19:25:45 ppo_trainer.py:547] ✨ Global step 12: {'policy_loss': ...}"), and rldk reads those lines from
the trainer's output. From --runaway-step on, the policy walks away from the reference: the per-token `kl` grows
until a guard trips. Like the real trainer under Ray it exits cleanly on SIGTERM after the current step.

    rldk monitor --preset grpo_safe --out runs/openrlhf_guard \\
        --cmd "python examples/trainers/sim_openrlhf.py --runaway-step 40"
"""
import argparse
import logging
import math
import random
import signal
import sys
import time

stop_requested = False


def on_sigterm(signum, frame):
    global stop_requested
    stop_requested = True


def make_logger():
    # OpenRLHF's format (openrlhf/utils/logging_utils.py): level, date, file:line, then the message.
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("%(levelname)s %(asctime)s %(filename)s:%(lineno)d] %(message)s",
                                           datefmt="%m-%d %H:%M:%S"))
    logger = logging.getLogger("openrlhf_sim")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    return logger


def status_at(step, runaway_step, rng):
    """One global step's status dict, with OpenRLHF's keys (actor fit + experience info + rollout/timing)."""
    runaway = max(0, step - runaway_step)
    kl = 0.01 + 0.0004 * step + 0.0006 * runaway ** 2 + abs(rng.gauss(0, 0.002))
    reward = 0.1 + 0.6 * (1 - math.exp(-step / 60)) - 0.01 * runaway + rng.gauss(0, 0.02)
    length = 400 + 0.8 * step + 3 * runaway + rng.gauss(0, 6)
    return {
        "policy_loss": rng.gauss(0.0, 0.02),
        "actor_lr": 1e-06,
        "actor_grad_norm": abs(rng.gauss(0.3, 0.04)) * (1 + runaway / 20),
        "kl": kl,
        "reward": reward,
        "return": reward - 0.01 * kl,
        "response_length": length,
        "total_length": length + 200.0,
        "truncated": min(1.0, max(0.0, 0.01 + 0.004 * runaway + rng.gauss(0, 0.003))),
        "ppo_clip_ratio": abs(rng.gauss(0.01, 0.003)) * (1 + runaway / 10),
        "group_reward_std": abs(rng.gauss(0.3, 0.02)),
        "timing/step_total": 95.0 + rng.gauss(0, 1.0),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--runaway-step", type=int, default=40, help="global step at which KL starts to run away")
    parser.add_argument("--step-seconds", type=float, default=0.02, help="simulated time per global step")
    parser.add_argument("--eval-every", type=int, default=25)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, on_sigterm)
    rng = random.Random(args.seed)
    logger = make_logger()
    logger.info("Start training: %d global steps", args.steps)
    for step in range(1, args.steps + 1):
        time.sleep(args.step_seconds)
        logger.info("✨ Global step %d: %s", step, status_at(step, args.runaway_step, rng))
        if step % args.eval_every == 0:
            metrics = {"eval_math_pass1": 0.3 + 0.001 * step, "eval_response_length_mean": 410.0}
            logger.info("✨ Evaluation completed in 0:00:05, global_step %d, eval_metrics: %s", step, metrics)
        if stop_requested:
            logger.info("Received SIGTERM at global step %d: saving checkpoint and exiting", step)
            return 0
    logger.info("Training finished after %d global steps", args.steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
