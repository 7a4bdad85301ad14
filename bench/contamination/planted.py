"""A training corpus with planted eval contamination, and the eval sets that go with it (bench and tests).

The corpus is Zipf-distributed synthetic words (a 50,000-word vocabulary, exponent 1.1, sentences with digits and
punctuation), documents of about 200 words, one per line (.txt) or as {"text": ...} JSONL, split over several files.
The contaminated eval set holds items (four sentences of 15-20 words with a number in the middle) of which copies
are planted in the corpus as:

    verbatim      the item is a training document                        expected: full
    whitespace    the same with runs of spaces, tabs and newlines        expected: full
    casing        upper-cased                                            expected: full
    numbers       its number changed                                     expected: full (one word differs)
    shuffle       its sentences in another order                         expected: full
    partial90     the first 90 % of its words, inside a longer document  expected: full (coverage >= 80 %)
    partial60     the first 60 %                                         expected: partial
    partial30     the first 30 %                                         expected: partial
    clean         never planted                                          expected: clean

A second eval set is all clean items (false positives are counted on it).
"""

from __future__ import annotations

import json
import os
import random
import re

import numpy as np

KINDS = ["verbatim", "whitespace", "casing", "numbers", "shuffle", "partial90", "partial60", "partial30"]
EXPECTED = {"verbatim": "full", "whitespace": "full", "casing": "full", "numbers": "full", "shuffle": "full",
            "partial90": "full", "partial60": "partial", "partial30": "partial", "clean": "clean"}
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def vocabulary(size=50000, seed=0):
    rng = random.Random(seed)
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(LETTERS) for _ in range(rng.randint(2, 9))))
    return np.array(sorted(words), dtype=object)


class Words:
    """Zipf-distributed words from a fixed vocabulary, drawn in blocks with NumPy."""

    BLOCK = 1 << 20

    def __init__(self, seed, size=50000, exponent=1.1):
        self.vocab = vocabulary(size)
        p = 1.0 / np.arange(1, size + 1) ** exponent
        self.cdf = np.cumsum(p / p.sum())
        self.rng = np.random.default_rng(seed)
        self.buffer, self.at = [], 0

    def take(self, n):
        # Drawn a million at a time (inverse CDF): per-call sampling with p= would redo the CDF every call.
        if self.at + n > len(self.buffer):
            idx = np.searchsorted(self.cdf, self.rng.random(max(self.BLOCK, n)), side="right")
            self.buffer = self.vocab[np.minimum(idx, len(self.vocab) - 1)].tolist()
            self.at = 0
        out = self.buffer[self.at:self.at + n]
        self.at += n
        return out


def make_item(words: Words, rng: random.Random) -> str:
    sentences = []
    for s in range(4):
        w = list(words.take(rng.randint(15, 20)))
        w[0] = w[0].capitalize()
        if s == 1:
            w.insert(len(w) // 2, str(rng.randint(10, 9999)))  # the number sits mid-item, away from the edges
        sentences.append(" ".join(w) + rng.choice([".", "?", "!"]))
    return " ".join(sentences)


def word_prefix(text: str, fraction: float) -> str:
    """The text up to the end of its round(fraction * words)-th word."""
    spans = [m.end() for m in re.finditer(r"[A-Za-z0-9]+", text)]
    k = max(1, round(fraction * len(spans)))
    return text[:spans[k - 1]]


def plant(item: str, kind: str, rng: random.Random, filler) -> str:
    if kind == "verbatim":
        return item
    if kind == "whitespace":
        return re.sub(r" ", lambda _: rng.choice([" ", "  ", "\t", " \n ", "   "]), item)
    if kind == "casing":
        return item.upper()
    if kind == "numbers":
        return re.sub(r"\d+", lambda m: str(int(m.group()) + 1), item)
    if kind == "shuffle":
        sentences = re.findall(r"[^.?!]+[.?!]", item)
        order = list(range(len(sentences)))
        while order == sorted(order):
            rng.shuffle(order)
        return " ".join(sentences[i].strip() for i in order)
    if kind.startswith("partial"):
        return filler(60) + " " + word_prefix(item, int(kind[7:]) / 100) + " " + filler(60)
    raise ValueError(kind)


def generate(out_dir, train_bytes=20_000_000, files=4, per_kind=5, clean_items=40, fmt="jsonl", seed=1,
             doc_words=200):
    """Writes train/part-NNN.{jsonl,txt}, eval_contaminated.jsonl, eval_clean.jsonl; returns the plan: for each
    contaminated eval row (1-based), its kind and the training file and row (1-based) its copy went to."""
    rng = random.Random(seed)
    words = Words(seed)
    os.makedirs(os.path.join(out_dir, "train"), exist_ok=True)

    def filler(n):
        return " ".join(words.take(n))

    items = []  # (kind, text)
    for kind in KINDS:
        items += [(kind, make_item(words, rng)) for _ in range(per_kind)]
    items += [("clean", make_item(words, rng)) for _ in range(clean_items // 2)]
    rng.shuffle(items)
    clean_set = [make_item(words, rng) for _ in range(clean_items)]
    planted = [(row, kind, plant(text, kind, rng, filler)) for row, (kind, text) in enumerate(items, 1)
               if kind != "clean"]

    # Planted documents go to random places: (file, row) chosen before the files are written.
    per_file = train_bytes // files
    avg_doc = doc_words * 6
    rows_per_file = max(len(planted), per_file // avg_doc)
    places = {}
    for row, kind, text in planted:
        while True:
            where = (rng.randrange(files), rng.randrange(rows_per_file))
            if where not in places:
                places[where] = (row, kind, text)
                break
    plan = {}
    ext = "jsonl" if fmt == "jsonl" else "txt"
    for f in range(files):
        path = os.path.join(out_dir, "train", f"part-{f:03d}.{ext}")
        with open(path, "w", encoding="utf-8") as out:
            for r in range(rows_per_file):
                if (f, r) in places:
                    row, kind, text = places[(f, r)]
                    plan[row] = {"kind": kind, "file": path, "row": r + 1}
                else:
                    w = words.take(doc_words)
                    text = " ".join(w) + "."
                if fmt == "jsonl":
                    out.write(json.dumps({"text": text}) + "\n")
                else:
                    out.write(text.replace("\n", " ").replace("\r", " ") + "\n")
    with open(os.path.join(out_dir, "eval_contaminated.jsonl"), "w") as out:
        for row, (kind, text) in enumerate(items, 1):
            out.write(json.dumps({"id": row, "question": text, "kind": kind}) + "\n")
            if kind == "clean":
                plan[row] = {"kind": "clean"}
    with open(os.path.join(out_dir, "eval_clean.jsonl"), "w") as out:
        for row, text in enumerate(clean_set, 1):
            out.write(json.dumps({"id": row, "question": text}) + "\n")
    return plan
