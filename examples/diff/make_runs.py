"""Writes the two runs of the `rldk diff` example: the same policy-gradient job, launched twice, where run B was
resumed from its step-120 checkpoint with the learning rate raised 4x. Both launches use the same seed, so the runs
are identical up to step 120 (a controlled ablation); from then on the larger updates make KL to the reference
policy grow much faster in B.

The trainer is real, if tiny: a softmax policy over 16 "tokens" trained with REINFORCE (batch-mean baseline) and an
exact KL penalty to the frozen initial policy, plain SGD. Per step it logs, as TRL would name them: kl (the sampled
k1 estimate, mean log pi - log ref over the batch), reward, entropy, grad_norm, learning_rate, loss.

  baseline.jsonl   lr 0.05 throughout, 300 steps
  lr_change.jsonl  lr 0.05, crashed after step 130, resumed from the step-120 checkpoint with lr 0.2: steps 120-130
                   appear twice (rldk takes the resumed segment's values)

Run: python3 examples/diff/make_runs.py        (deterministic: the files are byte-identical every time)
"""
import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB = 16
BATCH = 64
KL_COEF = 0.05
STEPS = 300
RESUME_STEP = 120
CRASH_AFTER = 130


def softmax(logits):
    top = max(logits)
    exps = [math.exp(x - top) for x in logits]
    total = sum(exps)
    return [e / total for e in exps]


class Trainer:
    def __init__(self, data_seed):
        init = random.Random(7)  # the model's initialisation is part of the config: the same in both runs
        self.theta = [init.gauss(0.0, 0.3) for _ in range(VOCAB)]
        self.ref_logp = [math.log(p) for p in softmax(self.theta)]
        self.task_reward = [math.sin(1.7 * i) for i in range(VOCAB)]
        self.rng = random.Random(data_seed)

    def state(self):
        return list(self.theta), self.rng.getstate()

    def restore(self, state):
        self.theta, rng_state = list(state[0]), state[1]
        self.rng.setstate(rng_state)

    def step(self, lr):
        probs = softmax(self.theta)
        logp = [math.log(p) for p in probs]
        actions = self.rng.choices(range(VOCAB), weights=probs, k=BATCH)
        rewards = [self.task_reward[a] + self.rng.gauss(0.0, 0.5) for a in actions]
        baseline = sum(rewards) / BATCH
        # Policy gradient of -E[adv * log pi(a)]: d log pi(a) / d theta = onehot(a) - pi.
        grad = [0.0] * VOCAB
        for a, r in zip(actions, rewards):
            adv = r - baseline
            for i in range(VOCAB):
                grad[i] -= adv * ((1.0 if i == a else 0.0) - probs[i]) / BATCH
        kl_exact = sum(p * (lp - rl) for p, lp, rl in zip(probs, logp, self.ref_logp))
        for i in range(VOCAB):
            grad[i] += KL_COEF * probs[i] * (logp[i] - self.ref_logp[i] - kl_exact)
        grad_norm = math.sqrt(sum(g * g for g in grad))
        self.theta = [t - lr * g for t, g in zip(self.theta, grad)]
        kl_sampled = sum(logp[a] - self.ref_logp[a] for a in actions) / BATCH
        entropy = -sum(p * lp for p, lp in zip(probs, logp))
        pg_loss = -sum((r - baseline) * logp[a] for a, r in zip(actions, rewards)) / BATCH
        return {"kl": kl_sampled, "reward": baseline, "entropy": entropy, "grad_norm": grad_norm,
                "learning_rate": lr, "loss": pg_loss + KL_COEF * kl_exact}


def record(step, metrics):
    out = {"step": step}
    out.update({k: round(v, 8) for k, v in metrics.items()})
    return json.dumps(out, sort_keys=True)


def baseline_run():
    trainer = Trainer(data_seed=1)
    return [record(step, trainer.step(0.05)) for step in range(1, STEPS + 1)]


def lr_change_run():
    trainer = Trainer(data_seed=1)
    lines, checkpoint = [], None
    for step in range(1, CRASH_AFTER + 1):
        lines.append(record(step, trainer.step(0.05)))
        if step == RESUME_STEP - 1:
            checkpoint = trainer.state()  # saved after step 119: the resumed run starts at step 120
    trainer.restore(checkpoint)
    for step in range(RESUME_STEP, STEPS + 1):
        lines.append(record(step, trainer.step(0.2)))
    return lines


def main():
    for name, lines in (("baseline.jsonl", baseline_run()), ("lr_change.jsonl", lr_change_run())):
        with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
