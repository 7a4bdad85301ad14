#!/usr/bin/env python3
"""A real, tiny PPO-style language-model trainer on CPU, for checking that `rldk scan` catches real failures.

The policy is a small MLP that writes token sequences one token at a time from the previous token and the position
(vocabulary of 12, token 0 = end of sequence, at most 8 tokens). The task rewards counting: each token that is one
more than the previous one (mod 11, tokens 1..11) earns a point, normalised by the longest possible sequence. A per-token KL penalty towards the frozen initial policy (the
reference) is part of the loss (GRPO-style), its coefficient set by an adaptive KL controller; the update is PPO's
clipped objective over a few epochs of minibatches with whitened, sequence-level advantages and an entropy bonus.

It logs one JSON object per step with canonical rldk metric names (policy/kl, policy/kl_coef, policy/entropy,
reward/mean, reward/std, policy/grad_norm (before clipping), policy/lr, policy/clip_frac, policy/importance_ratio,
advantage/mean, advantage/std, response/length_mean, policy/loss, perf/step_time, perf/throughput).

--fault pushes it into a known failure at --fault-step:
  lr-blowup  the learning rate is multiplied by --fault-factor (a units mistake, a scheduler restored from the wrong
             checkpoint): the policy becomes deterministic (entropy collapse), KL to the reference jumps
  no-kl      the KL penalty is dropped from the loss (beta forced to 0, controller off): KL runs away

    python examples/trainers/torch_policy.py --steps 200 --out runs/healthy.jsonl
    python examples/trainers/torch_policy.py --steps 200 --fault lr-blowup --fault-step 120 --out runs/broken.jsonl
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time

import torch
from torch import nn

VOCAB = 12  # token 0 ends the sequence
MAX_LEN = 8
BOS = VOCAB  # an extra input-only token that starts every sequence


class TokenPolicy(nn.Module):
    """Next-token distribution from the previous token and the position: a two-layer MLP. Small enough that a
    training step takes milliseconds on one CPU core, and teacher-forced log-probs need no sequential loop."""

    def __init__(self, hidden: int):
        super().__init__()
        self.token = nn.Embedding(VOCAB + 1, hidden)
        self.position = nn.Embedding(MAX_LEN, hidden)
        self.mlp = nn.Sequential(nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, VOCAB))

    def step_logits(self, previous: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
        return self.mlp(self.token(previous) + self.position(position))

    def logits(self, tokens: torch.Tensor) -> torch.Tensor:
        """Teacher-forced logits for every position of `tokens` (batch, MAX_LEN), in one pass."""
        batch = tokens.shape[0]
        previous = torch.cat([torch.full((batch, 1), BOS, dtype=torch.long), tokens[:, :-1]], dim=1)
        return self.step_logits(previous, torch.arange(tokens.shape[1]).expand(batch, -1))

    @torch.no_grad()
    def sample(self, batch: int, generator: torch.Generator) -> torch.Tensor:
        token = torch.full((batch,), BOS, dtype=torch.long)
        tokens = []
        for t in range(MAX_LEN):
            probs = torch.softmax(self.step_logits(token, torch.full((batch,), t, dtype=torch.long)), dim=-1)
            token = torch.multinomial(probs, 1, generator=generator).squeeze(1)
            tokens.append(token)
        return torch.stack(tokens, dim=1)


def response_mask(tokens: torch.Tensor) -> torch.Tensor:
    """1 for tokens up to and including the first end-of-sequence token, 0 after it."""
    ended_before = torch.cumsum((tokens == 0).long(), dim=1) - (tokens == 0).long()
    return (ended_before == 0).float()


def task_reward(tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    prev, cur = tokens[:, :-1], tokens[:, 1:]
    counting = ((cur == (prev % (VOCAB - 1)) + 1) & (cur != 0)).float() * mask[:, 1:]
    return counting.sum(dim=1) / (MAX_LEN - 1)


def token_stats(policy_logits, ref_logits, tokens):
    logp_all = torch.log_softmax(policy_logits, dim=-1)
    ref_all = torch.log_softmax(ref_logits, dim=-1)
    logp = logp_all.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    # Exact per-token KL(pi || pi_ref) over the whole (small) vocabulary, and the policy's entropy.
    kl = (logp_all.exp() * (logp_all - ref_all)).sum(-1)
    entropy = -(logp_all.exp() * logp_all).sum(-1)
    return logp, kl, entropy


def masked_mean(x, mask):
    return (x * mask).sum() / mask.sum().clamp(min=1.0)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--steps", type=int, default=200, help="PPO iterations (one rollout batch each)")
    p.add_argument("--batch", type=int, default=64, help="sequences per rollout batch")
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--ppo-epochs", type=int, default=2)
    p.add_argument("--minibatches", type=int, default=2)
    p.add_argument("--clip", type=float, default=0.2, help="PPO ratio clip epsilon")
    p.add_argument("--max-grad-norm", type=float, default=1.0)
    p.add_argument("--kl-coef", type=float, default=0.3, help="initial KL penalty coefficient beta")
    p.add_argument("--kl-coef-min", type=float, default=0.1, help="floor of the adaptive beta")
    p.add_argument("--kl-target", type=float, default=0.15, help="adaptive controller's per-token KL target")
    p.add_argument("--kl-horizon", type=float, default=300.0, help="adaptive controller horizon (sequences)")
    p.add_argument("--entropy-coef", type=float, default=0.01, help="entropy bonus in the loss")
    p.add_argument("--fault", choices=("none", "lr-blowup", "no-kl"), default="none")
    p.add_argument("--fault-step", type=int, default=120)
    p.add_argument("--fault-factor", type=float, default=300.0, help="learning-rate multiplier for lr-blowup")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--out", default="runs/torch_policy/metrics.jsonl", help="metrics JSONL written here")
    return p.parse_args(argv)


def train(args) -> None:
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    generator = torch.Generator().manual_seed(args.seed)
    policy = TokenPolicy(args.hidden)
    reference = copy.deepcopy(policy).requires_grad_(False)
    optimizer = torch.optim.Adam(policy.parameters(), lr=args.lr)
    beta = args.kl_coef
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as log:
        for step in range(1, args.steps + 1):
            started = time.perf_counter()
            faulty = args.fault != "none" and step >= args.fault_step
            lr = args.lr * (args.fault_factor if faulty and args.fault == "lr-blowup" else 1.0)
            for group in optimizer.param_groups:
                group["lr"] = lr
            if faulty and args.fault == "no-kl":
                beta = 0.0

            tokens = policy.sample(args.batch, generator)
            mask = response_mask(tokens)
            with torch.no_grad():
                old_logp, kl_tok, entropy_tok = token_stats(policy.logits(tokens), reference.logits(tokens), tokens)
                score = task_reward(tokens, mask)
                ref_logp_all = torch.log_softmax(reference.logits(tokens), -1)
                advantage = (score - score.mean()) / (score.std() + 1e-8)

            clipped, ratios, losses, grad_norms = [], [], [], []
            for _ in range(args.ppo_epochs):
                order = torch.randperm(args.batch, generator=generator)
                for idx in order.chunk(args.minibatches):
                    logits = policy.logits(tokens[idx])
                    logp = torch.log_softmax(logits, -1).gather(-1, tokens[idx].unsqueeze(-1)).squeeze(-1)
                    ratio = torch.exp(logp - old_logp[idx])
                    adv = advantage[idx].unsqueeze(1)
                    objective = torch.min(ratio * adv, ratio.clamp(1 - args.clip, 1 + args.clip) * adv)
                    logp_all = torch.log_softmax(logits, -1)
                    entropy = -(logp_all.exp() * logp_all).sum(-1)
                    kl_now = (logp_all.exp() * (logp_all - ref_logp_all[idx])).sum(-1)
                    loss = -masked_mean(objective + args.entropy_coef * entropy - beta * kl_now, mask[idx])
                    optimizer.zero_grad()
                    loss.backward()
                    grad_norms.append(float(nn.utils.clip_grad_norm_(policy.parameters(), args.max_grad_norm)))
                    optimizer.step()
                    with torch.no_grad():
                        m = mask[idx]
                        clipped.append(float(masked_mean(((ratio - 1).abs() > args.clip).float(), m)))
                        ratios.append(float(masked_mean(ratio, m)))
                        losses.append(float(loss))

            kl = float(masked_mean(kl_tok, mask))
            if not (faulty and args.fault == "no-kl"):
                # Adaptive controller: beta *= 1 + clip(kl / target - 1, +-0.2) * batch / horizon.
                error = max(-0.2, min(0.2, kl / args.kl_target - 1.0))
                beta = max(args.kl_coef_min, beta * (1.0 + error * args.batch / args.kl_horizon))
            seconds = time.perf_counter() - started
            record = {
                "step": step,
                "policy/kl": kl,
                "policy/kl_coef": beta,
                "policy/entropy": float(masked_mean(entropy_tok, mask)),
                "reward/mean": float(score.mean()),
                "reward/std": float(score.std()),
                "policy/grad_norm": sum(grad_norms) / len(grad_norms),
                "policy/lr": lr,
                "policy/clip_frac": sum(clipped) / len(clipped),
                "policy/importance_ratio": sum(ratios) / len(ratios),
                "policy/loss": sum(losses) / len(losses),
                "advantage/mean": float(advantage.mean()),
                "advantage/std": float(advantage.std()),
                "response/length_mean": float(mask.sum(1).mean()),
                "perf/step_time": seconds,
                "perf/throughput": float(mask.sum()) / seconds,
            }
            log.write(json.dumps(record) + "\n")
            log.flush()


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.fault != "none" and not 1 <= args.fault_step <= args.steps:
        print("torch_policy: --fault-step %d is outside 1..%d" % (args.fault_step, args.steps), file=sys.stderr)
        return 2
    train(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
