"""Train/eval contamination: are eval items (prompts and reference answers) in the training data?

    from rldk import contamination
    report = contamination.check(train=["data/rl_pool.jsonl"], eval=["evals/gsm8k_test.jsonl"])
    report.contaminated          # any eval item partially or fully found
    report.json["eval_sets"]     # per set: n-gram length, full / partial / clean counts
    report.write("reports/contamination")   # contamination.json, .md, .html, clean.jsonl, dirty.jsonl

The same native engine as ``rldk contamination`` (docs/contamination.md): GPT-3's n-gram rule, Llama 2's
contaminated-token fraction, MinHash near-duplicates with datasketch's permutations. ``rldk.contamination.ray``
spreads the training corpus over a Ray cluster and gives the same report.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Union

from .. import _core

PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["Report", "check", "build_index", "options", "tokenize", "normalize", "shingles32", "permutations",
           "minhash", "lsh_parameters"]


def _paths(paths: Union[PathLike, Iterable[PathLike]]) -> List[str]:
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    return [os.fsdecode(os.fspath(p)) for p in paths]


def options(methods: Union[str, Sequence[str]] = "all", ngram: Optional[int] = None, boilerplate: int = 10,
            full_coverage: float = 0.8, threshold: float = 0.8, num_perm: int = 128, shingle: int = 5, seed: int = 1,
            scheme: str = "legacy", lowercase: bool = True, punctuation: str = "strip", digits: str = "keep",
            text_cols: Sequence[str] = (), threads: int = 0) -> dict:
    """The check's options with the CLI's names and defaults (``rldk contamination --help``)."""
    if isinstance(methods, str):
        methods = methods.split(",")
    return {"methods": list(methods), "ngram": ngram, "boilerplate": boilerplate, "full_coverage": full_coverage,
            "threshold": threshold, "num_perm": num_perm, "shingle": shingle, "seed": seed, "scheme": scheme,
            "lowercase": lowercase,
            "punctuation": punctuation, "digits": digits, "text_cols": list(text_cols), "threads": threads}


@dataclass
class Report:
    """A contamination report: the rldk.contamination/v1 document and the files ``--out`` writes."""

    json_text: str
    markdown: str
    html: str
    clean_jsonl: str
    dirty_jsonl: str
    contaminated: bool

    @property
    def json(self) -> dict:
        return json.loads(self.json_text)

    def write(self, out: PathLike) -> None:
        """Writes contamination.json, contamination.md, contamination.html, clean.jsonl and dirty.jsonl into ``out``."""
        os.makedirs(out, exist_ok=True)
        for name, text in (("contamination.json", self.json_text), ("contamination.md", self.markdown),
                           ("contamination.html", self.html), ("clean.jsonl", self.clean_jsonl),
                           ("dirty.jsonl", self.dirty_jsonl)):
            with open(os.path.join(out, name), "w", encoding="utf-8", newline="") as f:
                f.write(text)


def _report(outputs) -> Report:
    return Report(*outputs)


def check(train: Union[PathLike, Iterable[PathLike]] = (), eval: Union[PathLike, Iterable[PathLike]] = (),
          index: Optional[PathLike] = None, **kwargs) -> Report:
    """Checks eval sets against training files/folders (or an index from :func:`build_index`), on every core."""
    train_paths = _paths(train) if train else []
    if bool(train_paths) == (index is not None):
        raise ValueError("give the training data (train=...) or an index (index=...), one of them")
    return _report(_core.contamination_check(train_paths, _paths(eval), os.fspath(index) if index else "",
                                             options(**kwargs)))


def build_index(train, out: PathLike, sizes: Sequence[int] = (13, 11), **kwargs) -> dict:
    """Writes a persistent n-gram index of the training data (``rldk contamination index``)."""
    return _core.contamination_build_index(_paths(train), list(sizes), os.fspath(out), options(**kwargs))


def tokenize(text: str, lowercase: bool = True, punctuation: str = "strip", digits: str = "keep"):
    """Words of ``text`` as (begin byte, end byte, 64-bit hash of the normalised word)."""
    return _core.contamination_tokenize(text, lowercase, punctuation, digits)


def normalize(text: str, lowercase: bool = True, punctuation: str = "strip", digits: str = "keep") -> str:
    """The normalised words joined by spaces: what the n-gram and MinHash methods compare."""
    return _core.contamination_normalize(text, lowercase, punctuation, digits)


def shingles32(text: str, k: int = 5) -> List[int]:
    """The 32-bit values MinHash takes for ``text``'s word k-grams (what datasketch's ``hashfunc`` would return)."""
    return _core.contamination_shingles32(text, k)


def permutations(num_perm: int = 128, seed: int = 1, scheme: str = "legacy"):
    """(a, b): the MinHash permutations, to pass as ``datasketch.MinHash(permutations=..., scheme=scheme)``."""
    return _core.contamination_permutations(num_perm, seed, scheme)


def minhash(shingles: Sequence[int], num_perm: int = 128, seed: int = 1, scheme: str = "legacy") -> List[int]:
    """The signature of 32-bit shingle values, computed as datasketch does with that scheme."""
    return _core.contamination_minhash(list(shingles), num_perm, seed, scheme)


def lsh_parameters(threshold: float, num_perm: int, false_positive_weight: float = 0.5,
                   false_negative_weight: float = 0.5):
    """(bands, rows) chosen by datasketch's MinHashLSH objective."""
    return _core.contamination_lsh_parameters(threshold, num_perm, false_positive_weight, false_negative_weight)
