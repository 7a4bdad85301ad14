"""Per-sample rollout data for `rldk reward health`: a real TRL GRPOTrainer run, and labeled synthetic sets.

Two sources, for two purposes:

- `run_trl_grpo` trains the tiny random GPT-2 of tiny_models.py with TRL's GRPOTrainer on CPU
  (`log_completions=True`), so the completions parquet files are the ones TRL itself writes, not our idea of them.
  A programmatic reward decides what the samples show: "length" pays for length, "flat" pays a pseudo-random amount
  that does not depend on length, "constant" pays the same for everything (every GRPO group has zero variance).
- `write_rollouts` writes synthetic samples with real-looking text in the layouts rldk reads (TRL parquet folder,
  verl `{step}.jsonl` dumps, generic JSONL and CSV), each kind with one injected pathology (or none, for the
  clean kinds), so a detector can be scored on detection rate and false alarms. `make_rollouts` returns the same
  samples as a pandas DataFrame, with the latent truths (keyword flag, agreeing prompt, ...) the files do not carry.

Every generator is seeded and deterministic: same arguments, same bytes.
"""
import dataclasses
import hashlib
import json
import os
import tempfile
import zlib

import numpy as np

KINDS = ("clean", "clean_binary", "length_bias", "keyword_shortcut", "saturation", "zero_variance",
         "proxy_up_gold_down", "rm_swap")
# Preference-pair sets (make_pairs / write_pairs): chosen/rejected completions scored by a reward model.
PAIR_KINDS = ("clean_pairs", "miscalibrated_pairs")
CLEAN_KINDS = ("clean", "clean_binary", "clean_pairs")  # no pathology: any warning on these is a false alarm
FORMATS = ("trl_parquet", "verl_jsonl", "jsonl", "csv")

# The check of `rldk reward health` each pathology should trip (names of the findings in its JSON). A swapped reward
# model is a question for `rldk reward drift` (two models on the same samples), reported as "reward drift".
EXPECTED_CHECKS = {
    "length_bias": ("length_bias",),
    "keyword_shortcut": ("shortcut_features",),
    "saturation": ("saturation",),
    "zero_variance": ("zero_variance_groups",),
    "proxy_up_gold_down": ("gold",),
    "rm_swap": ("reward drift",),
    "miscalibrated_pairs": ("calibration",),
}

KEYWORD = "certainly"  # the shortcut word of keyword_shortcut

# Parameters of the synthetic kinds, in one place so the README and the report can quote them. Rewards are built
# on a latent score: prompt offset b_i ~ N(0, PROMPT_SD) + QUALITY_WEIGHT * q (q ~ N(0, 1): the sample's true
# quality, independent of its length) + what the kind injects, mapped to (0, 1) by a logistic function.
PARAMS = {
    "prompt_sd": 0.5,               # spread of per-prompt reward offsets (some prompts are easier)
    "quality_weight": 0.8,          # weight of the sample's true quality in the latent reward
    "length_median": (25, 90),      # per-prompt median completion length in words, drawn uniformly
    "length_log_sd": 0.35,          # within-prompt spread of log length
    "clean_trend": 0.25,            # latent gain from first to last step in the clean kinds (a healthy run)
    "length_beta": 0.6,             # length_bias: latent gain per SD of log length (the RM pays for absolute
                                    # length, as the RMs of Singhal et al. do, whatever the prompt)
    "length_growth": 0.5,           # length_bias: log-length growth over the run (the policy gets longer)
    "keyword_rate": (0.1, 0.6),     # keyword_shortcut: share of samples with KEYWORD, first to last step
    "keyword_gain": 1.2,            # keyword_shortcut: latent bonus for KEYWORD
    "clean_keyword_rate": 0.03,     # clean: KEYWORD appears, paying nothing
    "saturation_start": 0.35,       # saturation: reward = clip(start + rise * t + ..., 0, 1)
    "saturation_rise": 0.8,
    "pass_rate": (0.3, 0.7),        # zero_variance / clean_binary: per-prompt pass rates (mid, so all-equal
                                    # groups should be rare: p^G + (1-p)^G = 0.0078 at p = 0.5, G = 8)
    "collapse_rate": (0.2, 0.9),    # zero_variance: share of groups that say one thing G times, first to last step
    "proxy_rise": 2.0,              # proxy_up_gold_down: latent proxy gain over the run
    "gold_curve": (4.0, 4.5),       # proxy_up_gold_down: gold latent gain a*d - b*d^2, d = t/T (peak at d = 0.44)
    "gold_noise": 0.4,              # judge noise on the gold latent
    "gold_fraction": 0.25,          # share of samples a gold judge scored (the rest have no gold value)
    "swap_noise": 0.3,              # rm_swap: each reward model's own noise on the latent
    "swap_policy_gain": 0.4,        # rm_swap: the policy's quality gain on rm_v1 over the run
}

# Vocabulary of the synthetic answers: sentences of a small grammar, so texts read like (dull) model answers with
# punctuation, capitals and varied sentence lengths rather than random word salad.
_OPENERS = ["", "", "", "First, ", "Then ", "So ", "Next, ", "In short, ", "Because of this, ", "Finally, ",
            "Note that ", "In practice, "]
_SUBJECTS = ["the model", "this answer", "the first step", "each value", "the result", "our method",
             "the equation", "a careful reader", "the final sum", "the function", "the test", "this approach",
             "the second case", "the proof", "the table", "the loop"]
_VERBS = ["checks", "shows", "explains", "uses", "needs", "gives", "returns", "changes", "compares", "follows",
          "describes", "improves", "keeps", "removes", "counts", "splits"]
_OBJECTS = ["the input", "every case", "the main idea", "a simple rule", "the second term", "the error",
            "the total", "both sides", "the given list", "a small example", "the boundary", "the previous result",
            "the last digit", "each pair", "the whole range", "one more value"]
_TAILS = ["", "", " before the end", " in one pass", " with care", " for each item", " after the update",
          " without extra work", " as expected", " at the last step", " in this case", " so the answer holds",
          " because the order matters"]
_TOPICS = ["binary search", "compound interest", "photosynthesis", "the Pythagorean theorem", "recursion",
           "supply and demand", "prime numbers", "hash tables", "the water cycle", "matrix multiplication",
           "unit testing", "the French revolution", "gradient descent", "plate tectonics", "sorting a list",
           "fractions", "the speed of sound", "a linked list", "probability", "the causes of inflation"]
_TEMPLATES = ["Explain {topic} to a beginner.", "What is the main idea behind {topic}?",
              "Give a short example of {topic}.", "Why does {topic} matter in practice?",
              "Summarize {topic} in a few sentences.", "What mistakes do students make with {topic}?"]


class Corpus:
    """A seeded stream of grammar sentences joined by spaces; a completion of n words is a slice of it that starts
    at a sentence boundary. Slicing one long string keeps generation of a million texts fast."""

    def __init__(self, seed, sentences=20_000):
        rng = np.random.default_rng(seed)
        parts = [rng.integers(len(words), size=sentences).tolist()
                 for words in (_OPENERS, _SUBJECTS, _VERBS, _OBJECTS, _TAILS)]
        pieces = []
        for o, su, v, ob, t in zip(*parts):
            s = _OPENERS[o] + _SUBJECTS[su] + " " + _VERBS[v] + " " + _OBJECTS[ob] + _TAILS[t] + "."
            pieces.append(s[0].upper() + s[1:])
        self.text = " ".join(pieces)
        raw = np.frombuffer(self.text.encode("ascii"), dtype=np.uint8)  # ASCII: byte offsets are char offsets
        self.word_starts = np.concatenate([[0], np.flatnonzero(raw == ord(" ")) + 1])  # offset of every word
        self.word_ends = np.append(self.word_starts[1:] - 1, len(self.text))  # one past its last character
        first_char = raw[self.word_starts]
        self.sentence_words = np.flatnonzero((first_char >= ord("A")) & (first_char <= ord("Z")))  # sentence openers
        self.words = len(self.word_starts)

    def texts(self, rng, n_words, whole_sentences=True):
        """One text per entry of n_words (array of word counts), each from a random sentence start. With
        whole_sentences, cut back to the last full sentence in it (a text of one unfinished sentence keeps its n
        words), so a text has at most n words and reads like a finished answer; without, exactly n words. Either
        way the text ends with a full stop."""
        n_words = np.asarray(n_words, dtype=np.int64)
        usable = self.sentence_words[self.sentence_words < self.words - int(n_words.max()) - 1]
        first = usable[rng.integers(len(usable), size=len(n_words))]
        last = first + n_words - 1
        k = np.searchsorted(self.sentence_words, last, side="right")  # the first sentence opening after `last`
        ends_sentence = self.sentence_words[k] == last + 1
        prev_open = self.sentence_words[k - 1]
        if whole_sentences:
            last = np.where(ends_sentence | (prev_open <= first), last, prev_open - 1)
        begin = self.word_starts[first]
        end = self.word_ends[last]
        out = []
        for b, e in zip(begin.tolist(), end.tolist()):
            t = self.text[b:e]
            out.append(t if t.endswith(".") else t + ".")
        return out


def _prompt_texts(rng, n):
    combos = [(t, p) for t in _TEMPLATES for p in _TOPICS]
    picked = rng.permutation(len(combos))[:n] if n <= len(combos) else rng.integers(len(combos), size=n)
    texts = [combos[i][0].format(topic=combos[i][1]) for i in picked]
    # More prompts than template combinations: number the repeats so every prompt text stays distinct.
    seen = {}
    for i, t in enumerate(texts):
        seen[t] = seen.get(t, 0) + 1
        if seen[t] > 1:
            texts[i] = "%s (variant %d)" % (t, seen[t])
    return texts


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _kind_seed(kind, seed):
    # A stable per-kind stream: Python's hash() of a str changes between processes.
    return [zlib.crc32(kind.encode()), int(seed)]


def make_rollouts(kind, seed=0, steps=30, prompts=16, group=8):
    """The samples of one labeled set as a pandas DataFrame, one row per completion, in GRPO order (per step, each
    prompt's `group` completions next to each other).

    Columns: step (1-based), prompt, prompt_id, group (a GRPO group id, "s{step}-g{n}"), completion, words, reward
    (the reward the policy was trained on), optional rm_v2 (rm_swap) and gold (clean, proxy_up_gold_down; NaN where
    no judge scored the sample), gts (the prompt's reference answer), advantage (TRL's group-normalised one), and
    latent truths that are never written to files: quality, keyword, agree (rm_swap).
    """
    import pandas as pd

    if kind not in KINDS:
        raise ValueError("unknown kind %r; known: %s" % (kind, ", ".join(KINDS)))
    if steps < 3 or prompts < 2 or group < 2:
        raise ValueError("need steps >= 3 (early and late thirds), prompts >= 2 and group >= 2")
    p = PARAMS
    rng = np.random.default_rng(_kind_seed(kind, seed))
    corpus = Corpus(seed)
    prompt_text = _prompt_texts(rng, prompts)
    b = rng.normal(0.0, p["prompt_sd"], prompts)
    median_words = rng.uniform(*p["length_median"], prompts)
    # Prompt offsets uncorrelated with prompt lengths across this set's prompts: with 16 prompts a chance
    # correlation of 0.3 between "easy" and "long" prompts would put a length effect into the overall correlation
    # of a clean set that no within-prompt analysis shows.
    x = np.log(median_words) - np.log(median_words).mean()
    b = b - x * (b @ x) / (x @ x)
    pass_rate = rng.uniform(*p["pass_rate"], prompts)
    logit = np.log(pass_rate / (1 - pass_rate))  # the same for pass rates, on the logit scale
    pass_rate = _sigmoid(logit - x * ((logit - logit.mean()) @ x) / (x @ x))
    agree = np.arange(prompts) % 2 == 0  # rm_swap: the reward models agree on even prompts, disagree on odd ones
    rng.shuffle(agree)

    # Index arrays of the long table: every step sees every prompt (in a new order), `group` times.
    order = np.concatenate([rng.permutation(prompts) for _ in range(steps)])
    pid = np.repeat(order, group)
    step = np.repeat(np.arange(1, steps + 1), prompts * group)
    group_no = np.repeat(np.arange(steps * prompts), group)
    n = len(pid)
    d = (step - 1) / (steps - 1)  # training progress in [0, 1] (stands in for sqrt(KL) in the gold curve)

    # The text first: rewards are computed from the length of the text actually written.
    target = np.exp(np.log(median_words[pid]) + p["length_log_sd"] * rng.normal(0.0, 1.0, n))
    if kind == "length_bias":
        target = target * np.exp(p["length_growth"] * d)  # the policy learns that longer pays
    completion = corpus.texts(rng, np.maximum(3, np.rint(target)).astype(np.int64))
    lo, hi = p["keyword_rate"]
    keyword = rng.random(n) < (lo + (hi - lo) * d if kind == "keyword_shortcut" else
                               p["clean_keyword_rate"] if kind == "clean" else 0.0)
    for i in np.flatnonzero(keyword).tolist():
        t = completion[i]  # "Certainly, the model ..."
        completion[i] = KEYWORD.capitalize() + ", " + t[0].lower() + t[1:]
    collapsed = np.zeros(n, dtype=bool)
    if kind == "zero_variance":
        # Collapsed sampling diversity, growing over the run: a collapsed group says one thing G times.
        lo, hi = p["collapse_rate"]
        group_d = (np.arange(steps * prompts) // prompts) / (steps - 1)
        collapsed = (rng.random(steps * prompts) < lo + (hi - lo) * group_d)[group_no]
        first = np.repeat(np.arange(0, n, group), group)
        completion = [completion[f] if c else t for t, f, c in zip(completion, first.tolist(), collapsed.tolist())]
    words = np.array([len(t.split()) for t in completion])
    # Log length in units of its within-prompt SD, against one reference length for all prompts: the biased reward
    # model pays for absolute length, so growth over the run pays and equal lengths earn equal bonuses.
    z_len = (np.log(words) - np.log(median_words).mean()) / p["length_log_sd"]

    q = rng.normal(0.0, 1.0, n)
    if kind == "rm_swap":
        q = q + p["swap_policy_gain"] * d
    base = b[pid] + p["quality_weight"] * q
    rm_v2 = gold = None
    if kind == "clean":
        reward = _sigmoid(base + p["clean_trend"] * d)
        gold = _sigmoid(base + p["clean_trend"] * d + rng.normal(0.0, p["gold_noise"], n))
    elif kind == "clean_binary":
        # A verifiable 0/1 reward with independent samples: all-equal groups occur only as often as pass rates say.
        logit = np.log(pass_rate / (1 - pass_rate))[pid] + 0.5 * p["clean_trend"] * (d - 0.5)
        reward = (rng.random(n) < _sigmoid(logit)).astype(float)
    elif kind == "length_bias":
        reward = _sigmoid(base + p["length_beta"] * z_len)
    elif kind == "keyword_shortcut":
        reward = _sigmoid(base + p["keyword_gain"] * keyword)
    elif kind == "saturation":
        # Pinned at the top: a clipped score that the policy pushes past its ceiling in the last third.
        reward = np.clip(p["saturation_start"] + p["saturation_rise"] * d + 0.15 * b[pid] + 0.12 * q, 0.0, 1.0)
    elif kind == "zero_variance":
        own = rng.random(n) < pass_rate[pid]
        shared = np.repeat(rng.random(steps * prompts), group) < pass_rate[pid]  # one draw for the whole group
        reward = np.where(collapsed, shared, own).astype(float)
    elif kind == "proxy_up_gold_down":
        reward = _sigmoid(base + p["proxy_rise"] * d)
        a, c = p["gold_curve"]
        gold = _sigmoid(base + a * d - c * d * d + rng.normal(0.0, p["gold_noise"], n))
    else:  # rm_swap
        sign = np.where(agree[pid], 1.0, -1.0)
        reward = _sigmoid(base + rng.normal(0.0, p["swap_noise"], n))
        rm_v2 = _sigmoid(b[pid] + sign * p["quality_weight"] * q + rng.normal(0.0, p["swap_noise"], n))
    if gold is not None:
        gold = np.where(rng.random(n) < p["gold_fraction"], gold, np.nan)

    df = pd.DataFrame({
        "step": step, "prompt": [prompt_text[i] for i in pid.tolist()], "prompt_id": pid,
        "group": ["s%d-g%d" % (s, g % prompts) for s, g in zip(step.tolist(), group_no.tolist())],
        "completion": completion, "words": words,
        "reward": reward.astype(float),
    })
    if rm_v2 is not None:
        df["rm_v2"] = rm_v2
    if gold is not None:
        df["gold"] = gold
    df["gts"] = ["answer %d" % i for i in pid.tolist()]
    df["advantage"] = _grpo_advantage(df["reward"].to_numpy(), group_no)
    df["quality"], df["keyword"], df["agree"] = q, keyword, agree[pid]
    return df


def make_pairs(kind, seed=0, pairs=600):
    """One labeled preference-pair set as a DataFrame: prompt, chosen, rejected, chosen_score, rejected_score.

    Which completion a person prefers is drawn from a Bradley-Terry model with a latent margin m ~ N(0, 1.5^2)
    between two completions of a prompt. The reward model's score margin is m plus a small error (clean_pairs:
    sigma(margin) is then close to a probability), or 3 m plus that error (miscalibrated_pairs: an over-trained reward
    model whose margins are three times too large, so it is overconfident; it still ranks the pairs as well). Each
    score carries a per-prompt offset, which a pairwise check must ignore."""
    import pandas as pd

    if kind not in PAIR_KINDS:
        raise ValueError("unknown pair kind %r; known: %s" % (kind, ", ".join(PAIR_KINDS)))
    rng = np.random.default_rng(_kind_seed(kind, seed))
    corpus = Corpus(seed, sentences=4_000)
    margin = rng.normal(0.0, 1.5, pairs)
    first_preferred = rng.random(pairs) < _sigmoid(margin)
    scale = 3.0 if kind == "miscalibrated_pairs" else 1.0
    model_margin = scale * margin + rng.normal(0.0, 0.3, pairs)
    offset = rng.normal(0.0, 2.0, pairs)
    a_text = corpus.texts(rng, rng.integers(6, 30, size=pairs))
    b_text = corpus.texts(rng, rng.integers(6, 30, size=pairs))
    a_score, b_score = offset + model_margin, offset
    return pd.DataFrame({
        "prompt": _prompt_texts(rng, pairs),
        "chosen": np.where(first_preferred, a_text, b_text),
        "rejected": np.where(first_preferred, b_text, a_text),
        "chosen_score": np.where(first_preferred, a_score, b_score),
        "rejected_score": np.where(first_preferred, b_score, a_score),
    })


def write_pairs(path, kind, fmt="jsonl", seed=0, pairs=600):
    """Writes one preference-pair set and returns a Rollouts. Folder layouts (trl_parquet, verl_jsonl) get one
    pairs.parquet / pairs.jsonl file in the folder; jsonl and csv are the file itself."""
    df = make_pairs(kind, seed=seed, pairs=pairs)
    path = str(path)
    if fmt in ("trl_parquet", "verl_jsonl"):
        os.makedirs(path, exist_ok=True)
        target = os.path.join(path, "pairs.parquet" if fmt == "trl_parquet" else "pairs.jsonl")
    else:
        _parent(path)
        target = path
    if target.endswith(".parquet"):
        df.to_parquet(target, index=False)
    elif target.endswith(".csv"):
        df.to_csv(target, index=False, float_format="%.17g")
    else:
        df.to_json(target, orient="records", lines=True, double_precision=15)
    return Rollouts(path=path, kind=kind, fmt=fmt, samples=len(df), reward_columns=[],
                    expected_checks=EXPECTED_CHECKS.get(kind, ()))


def _grpo_advantage(reward, group_no):
    """TRL's default advantage: (r - group mean) / (group std + 1e-4), std with Bessel's correction as torch's."""
    import pandas as pd

    g = pd.Series(reward).groupby(group_no)
    return ((reward - g.transform("mean").to_numpy()) / (g.transform("std").fillna(0.0).to_numpy() + 1e-4))


@dataclasses.dataclass
class Rollouts:
    """What write_rollouts wrote: the path to hand to `rldk reward health`, and how to read it."""
    path: str
    kind: str
    fmt: str
    samples: int
    reward_columns: list  # in the file's naming; the first is the one the policy was trained on
    gold_column: str = None
    expected_checks: tuple = ()


# Column names per layout. TRL names each reward column after its reward function; verl calls the reward "score"
# and puts extra reward fields beside it; the generic files use the plain names (CSV the alternative ones,
# response/score, so both spellings get exercised).
_NAMES = {
    "trl_parquet": {"reward": "quality_reward", "completion": "completion"},
    "verl_jsonl": {"reward": "score", "completion": "output"},
    "jsonl": {"reward": "reward", "completion": "completion"},
    "csv": {"reward": "score", "completion": "response"},
}


def write_rollouts(path, kind, fmt="trl_parquet", seed=0, steps=30, prompts=16, group=8):
    """Writes one labeled set and returns a Rollouts.

    trl_parquet: `path` is a folder of completions_{step:05d}.parquet, TRL's column layout (step, prompt,
      completion, one float column per reward function, extra columns, advantage).
    verl_jsonl: `path` is a folder of {step}.jsonl, one object per sample with verl's keys in verl's order (input,
      output, gts, score, step, then extra reward fields).
    jsonl: `path` is one file; keys step, prompt, completion, reward, group, [rm_v2], [gold].
    csv: `path` is one file; columns step, prompt, response, score, [rm_v2], [gold] (no group column: groups are
      consecutive rows of one prompt at one step, as GRPO writes them).
    A missing gold score is absent (verl), null (JSONL), empty (CSV) or null (Parquet).
    """
    if fmt not in FORMATS:
        raise ValueError("unknown format %r; known: %s" % (fmt, ", ".join(FORMATS)))
    df = make_rollouts(kind, seed=seed, steps=steps, prompts=prompts, group=group)
    names = _NAMES[fmt]
    extra = [c for c in ("rm_v2", "gold") if c in df.columns]
    path = str(path)
    if fmt == "trl_parquet":
        _write_trl(path, df, names["reward"], extra)
    elif fmt == "verl_jsonl":
        _write_verl(path, df, extra)
    elif fmt == "jsonl":
        _write_jsonl(path, df, extra)
    else:
        _write_csv(path, df, extra)
    rewards = [names["reward"]] + (["rm_v2"] if "rm_v2" in df.columns else [])
    return Rollouts(path=path, kind=kind, fmt=fmt, samples=len(df), reward_columns=rewards,
                    gold_column="gold" if "gold" in df.columns else None,
                    expected_checks=EXPECTED_CHECKS.get(kind, ()))


def _write_trl(folder, df, reward_name, extra):
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(folder, exist_ok=True)
    for step, part in df.groupby("step", sort=True):
        cols = {"step": pa.array(part["step"].to_numpy(np.int64)),
                "prompt": pa.array(part["prompt"].tolist(), pa.string()),
                "completion": pa.array(part["completion"].tolist(), pa.string()),
                reward_name: pa.array(part["reward"].to_numpy(float))}
        for c in extra:
            cols[c] = pa.array(part[c].to_numpy(float), from_pandas=True)  # NaN -> null, as pandas writes None
        cols["advantage"] = pa.array(part["advantage"].to_numpy(float))
        pq.write_table(pa.table(cols), os.path.join(folder, "completions_%05d.parquet" % step))


def _write_verl(folder, df, extra):
    os.makedirs(folder, exist_ok=True)
    for step, part in df.groupby("step", sort=True):
        lines = []
        for row in part.itertuples(index=False):
            entry = {"input": row.prompt, "output": row.completion, "gts": row.gts, "score": float(row.reward),
                     "step": int(step)}
            for c in extra:
                v = float(getattr(row, c))
                if not np.isnan(v):
                    entry[c] = v
            lines.append(json.dumps(entry, ensure_ascii=False))
        with open(os.path.join(folder, "%d.jsonl" % step), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")  # what verl's _dump_generations writes


def _write_jsonl(path, df, extra):
    _parent(path)
    with open(path, "w", encoding="utf-8") as f:
        for row in df.itertuples(index=False):
            entry = {"step": int(row.step), "prompt": row.prompt, "completion": row.completion,
                     "reward": float(row.reward), "group": row.group}
            for c in extra:
                v = float(getattr(row, c))
                entry[c] = None if np.isnan(v) else v
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")


def _write_csv(path, df, extra):
    _parent(path)
    out = df[["step", "prompt", "completion", "reward"] + extra].rename(
        columns={"completion": "response", "reward": "score"})
    out.to_csv(path, index=False, float_format="%.17g")  # round-trips every double


def _parent(path):
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)


def read_rollouts(path, fmt):
    """Reads a set back into a DataFrame with the generic names (step, prompt, completion, reward, [rm_v2],
    [gold]) with pandas and pyarrow; an independent check of the files, not rldk's reader."""
    import glob

    import pandas as pd

    if fmt == "trl_parquet":
        files = sorted(glob.glob(os.path.join(path, "completions_*.parquet")))
        df = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
        return df.rename(columns={_NAMES[fmt]["reward"]: "reward"})
    if fmt == "verl_jsonl":
        files = sorted(glob.glob(os.path.join(path, "*.jsonl")), key=lambda f: int(os.path.basename(f)[:-6]))
        df = pd.concat([pd.read_json(f, lines=True, precise_float=True) for f in files], ignore_index=True)
        return df.rename(columns={"input": "prompt", "output": "completion", "score": "reward"})
    if fmt == "jsonl":
        return pd.read_json(path, lines=True, precise_float=True)  # the default parser rounds
    return pd.read_csv(path).rename(columns={"response": "completion", "score": "reward"})


# ----------------------------------------------------------------------------------------------------------------
# A real TRL GRPOTrainer run.

def length_reward_for(cap):
    def length_reward(completions, **kwargs):
        """Pays for length: the number of words of a completion over the completion cap (a word is a token of the
        word-level tokenizer of tiny_models)."""
        return [len(text.split()) / cap for text in completions]

    return length_reward


def flat_reward(completions, **kwargs):
    """Pays a pseudo-random amount in [0, 1) fixed by the completion's text (a hash), so the same answer always
    gets the same reward, the reward varies inside every group, and it carries no information about length."""
    return [int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") / 2**32 for text in completions]


def constant_reward(completions, **kwargs):
    """Pays 1 for everything: every GRPO group has zero reward variance and zero advantage."""
    return [1.0] * len(completions)


def run_trl_grpo(out_dir, reward="length", max_steps=30, seed=0, num_generations=4, prompts_per_step=2,
                 max_completion_length=16, learning_rate=1e-3):
    """Trains tiny_models' GPT-2 with TRL's GRPOTrainer on CPU for `max_steps` steps, logging every step with
    `log_completions=True`, and returns `out_dir`; the samples are in out_dir/completions/completions_NNNNN.parquet
    (one file per step, num_generations * prompts_per_step rows each).

    The model is first warm-started (make_trl_runs.warm_start_model: a couple of seconds of language-model
    training) so that it ends its answers after a few words instead of running to the cap: a random 32-token
    model says <eos> with probability 1/32 per token, so most of its answers would hit the cap and have the same
    length, and a length reward would have nothing to pay for. With the default settings the "length" run's mean
    length grows over training, so the early and late thirds of the run differ.
    """
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    for folder in (here, os.path.join(os.path.dirname(os.path.dirname(here)), "tests", "fixtures", "real")):
        if folder not in sys.path:  # tiny_models and make_trl_runs (its warm start) live there
            sys.path.insert(0, folder)
    import tiny_models  # noqa: F401  (sets the offline environment before transformers is imported)

    from make_trl_runs import warm_start_model
    from transformers import AutoModelForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    rewards = {"length": length_reward_for(max_completion_length), "flat": flat_reward,
               "constant": constant_reward}
    if reward not in rewards:
        raise ValueError("unknown reward %r; known: %s" % (reward, ", ".join(rewards)))
    out_dir = str(out_dir)
    tokenizer = tiny_models.make_tokenizer()
    with tempfile.TemporaryDirectory(prefix="rldk_grpo_init_") as init:
        warm_start_model(tokenizer, init, seed=seed)
        model = AutoModelForCausalLM.from_pretrained(init)
    args = GRPOConfig(
        output_dir=out_dir, max_steps=max_steps, per_device_train_batch_size=num_generations * prompts_per_step,
        num_generations=num_generations, max_completion_length=max_completion_length, learning_rate=learning_rate,
        logging_steps=1, log_completions=True, num_completions_to_print=2, save_strategy="no", report_to=[],
        use_cpu=True, bf16=False, fp16=False, disable_tqdm=True, disable_dropout=True, seed=seed, data_seed=seed,
        dataloader_num_workers=0)
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=rewards[reward], args=args,
                          train_dataset=tiny_models.prompt_dataset(max(64, max_steps * prompts_per_step)))
    trainer.train()
    folder = os.path.join(out_dir, "completions")
    files = sorted(f for f in os.listdir(folder) if f.startswith("completions_") and f.endswith(".parquet"))
    assert len(files) == max_steps, "TRL wrote %d completions files for %d steps in %s" % (len(files), max_steps, folder)
    return out_dir


# ----------------------------------------------------------------------------------------------------------------
# The speed benchmark's input: one large Parquet file.

def write_speed_parquet(path, samples=1_000_000, seed=0, prompts=10_000, group=8, mean_words=9.0,
                        row_group_size=65_536, corpus_sentences=1_000_000):
    """One Parquet file of `samples` rows (step, prompt, completion, reward) with a length-biased reward, written
    in row groups so a streaming reader can read it piece by piece. Returns the number of UTF-8 bytes of text
    (prompt + completion). At the defaults that is about 100 MB.

    The corpus is large (a million sentences) so that nearly all completions are distinct strings: with few,
    Parquet's dictionary encoding would let a reader compute each text feature once for many samples."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng([7, seed])
    corpus = Corpus(seed, sentences=corpus_sentences)
    prompt_text = _prompt_texts(rng, prompts)
    prompt_bytes = np.array([len(t.encode()) for t in prompt_text])
    b = rng.normal(0.0, 0.5, prompts)
    groups_per_step = 64
    text_bytes = 0
    writer = None
    try:
        for lo in range(0, samples, row_group_size):
            n = min(row_group_size, samples - lo)
            idx = np.arange(lo, lo + n)
            g = idx // group
            pid = (g * 7919) % prompts  # a fixed permutation of prompts over groups
            words = np.maximum(3, np.rint(mean_words * np.exp(rng.normal(0.0, 0.35, n)))).astype(np.int64)
            z = (np.log(words) - np.log(mean_words)) / 0.35
            reward = _sigmoid(b[pid] + 0.5 * z + rng.normal(0.0, 0.8, n))
            # Cut mid-sentence: short whole-sentence texts repeat (the grammar has ~600k sentences), cut ones do not.
            completion = corpus.texts(rng, words, whole_sentences=False)
            text_bytes += int(prompt_bytes[pid].sum()) + sum(len(t) for t in completion)  # ASCII: chars = bytes
            table = pa.table({"step": pa.array(g // groups_per_step + 1, pa.int64()),
                              "prompt": pa.array([prompt_text[i] for i in pid.tolist()], pa.string()),
                              "completion": pa.array(completion, pa.string()),
                              "reward": pa.array(reward)})
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema)
            writer.write_table(table, row_group_size=row_group_size)
    finally:
        if writer is not None:
            writer.close()
    return text_bytes
