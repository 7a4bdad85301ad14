"""Score prompts and completions with a local sequence-classification reward model (torch + transformers).

This is what ``rldk reward drift A B --prompts P`` and ``rldk.reward.drift`` run when A or B is a model folder
(a folder with config.json, as ``save_pretrained`` writes it). It only scores; every statistic is computed by the
engine from the score file written here.

    model = RewardModel("rm_v2", batch_size=16)
    model.score(["What is 2+2?"], ["4"])            # [1.73...]

    python -m rldk.reward_models MODEL_DIR SAMPLES --out scores.jsonl   # JSONL: prompt, completion, score

The rules, so that anyone can reproduce a score with transformers alone:

- Loading: ``AutoTokenizer`` and ``AutoModelForSequenceClassification`` from the folder, local files only (never the
  network), in eval mode, under ``torch.no_grad``; float32 unless ``dtype`` says otherwise. No randomness is
  involved, so the same inputs on the same device give the same scores. Batching changes the shapes of the matrix
  products, so a float32 score can differ from the one-at-a-time score in the last bits (about 1e-7 of the hidden
  activations); float64 removes that where exact agreement matters more than speed.
- Input: when the tokenizer has a chat template, the prompt as a user turn and the completion as the assistant turn,
  rendered by ``apply_chat_template(..., tokenize=False)`` and tokenized without adding special tokens again (the
  template has them). Reward models trained on conversations (TRL's RewardTrainer, most published ones) saw exactly
  this. Without a template, ``tokenizer(prompt, completion)``: the text pair a cross-encoder reward model (BERT- or
  DeBERTa-style) is trained on; a tokenizer without a pair template simply concatenates the two. A row without a
  completion is the prompt (or the user turn) alone.
- Length: at most ``max_length`` tokens (capped by the model's position limit). Longer inputs are cut at the left:
  the completion under judgement and the last token, where decoder reward models read their score, are kept.
- Padding: on the right, with the attention mask. A tokenizer without a pad token pads with its eos token, and the
  model's ``config.pad_token_id`` is set to the same id, so the score does not depend on the batch (decoder models
  read the last token that is not padding).
- Score: with one label, the logit; with two, ``logit[1] - logit[0]`` (the log-odds of label 1, the "good" or
  "chosen" class of a binary classifier). More labels have no single score: an error.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import List, Optional, Sequence, Tuple

from .errors import InvalidArgumentError

DEFAULT_BATCH_SIZE = 8
DEFAULT_MAX_LENGTH = 1024
DTYPES = ("float32", "float64", "bfloat16", "float16")
# Column names by role, as the engine's sample reader spells them (src/core/samples/sample_assembler.cpp).
PROMPT_NAMES = ("prompt", "input", "query", "question", "instruction")
COMPLETION_NAMES = ("completion", "output", "response", "answer", "generation", "generated_text")
# Position limits above this are "no limit" sentinels (tokenizer.model_max_length is 1e30 when unset).
NO_LIMIT = 1_000_000


class RewardModelError(InvalidArgumentError):
    """A model folder, samples file or option the scorer cannot use; the message is one line for a person."""


def is_model_dir(path) -> bool:
    """A folder holding config.json (what ``save_pretrained`` writes), as opposed to a folder of sample files."""
    path = os.fspath(path)
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, "config.json"))


def _libraries():
    try:
        import torch
        import transformers
    except ImportError as e:
        raise RewardModelError(
            "scoring a reward model needs torch and transformers, and %s has no %s: pip install torch transformers"
            % (sys.executable, getattr(e, "name", None) or "module of them")) from None
    return torch, transformers


def _limit(model, tokenizer) -> Optional[int]:
    # The model's own position limit, where it declares one.
    for name in ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length"):
        value = getattr(model.config, name, None)
        if isinstance(value, int) and 0 < value < NO_LIMIT:
            return value
    value = getattr(tokenizer, "model_max_length", None)
    return value if isinstance(value, int) and 0 < value < NO_LIMIT else None


class RewardModel:
    """A sequence-classification reward model loaded from a local folder, scoring (prompt, completion) pairs."""

    def __init__(self, model_dir, *, batch_size: int = DEFAULT_BATCH_SIZE, max_length: int = DEFAULT_MAX_LENGTH,
                 device: Optional[str] = None, dtype: str = "float32"):
        model_dir = os.fspath(model_dir)
        if not os.path.exists(model_dir):
            raise RewardModelError("%s: no such reward model folder" % model_dir)
        if not is_model_dir(model_dir):
            raise RewardModelError("%s: not a model folder (no config.json; save the model with save_pretrained)"
                                   % model_dir)
        if int(batch_size) < 1 or int(max_length) < 2:
            raise RewardModelError("batch_size must be >= 1 and max_length >= 2")
        if dtype not in DTYPES:
            raise RewardModelError("dtype must be one of %s, got %r" % (", ".join(DTYPES), dtype))
        torch, transformers = _libraries()
        self._torch = torch
        self.model_dir = model_dir
        self.batch_size = int(batch_size)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
            self.model = transformers.AutoModelForSequenceClassification.from_pretrained(
                model_dir, local_files_only=True, dtype=getattr(torch, dtype))
        except Exception as e:  # noqa: BLE001  (any failure to load is this folder's problem, said in one line)
            raise RewardModelError("%s: cannot load a sequence-classification model and its tokenizer: %s"
                                   % (model_dir, " ".join(str(e).split()))) from None
        labels = self.model.config.num_labels
        if labels not in (1, 2):
            raise RewardModelError("%s: the model has %d labels; a reward model has 1 (the score) or 2 (score = "
                                   "logit[1] - logit[0])" % (model_dir, labels))
        self.num_labels = labels
        tok = self.tokenizer
        if tok.pad_token is None:
            if tok.eos_token is None:
                raise RewardModelError("%s: the tokenizer has neither a pad nor an eos token to pad batches with"
                                       % model_dir)
            tok.pad_token = tok.eos_token
        tok.padding_side = "right"
        tok.truncation_side = "left"
        self.model.config.pad_token_id = tok.pad_token_id
        limit = _limit(self.model, tok)
        self.max_length = min(int(max_length), limit) if limit else int(max_length)
        self.input_format = "chat" if getattr(tok, "chat_template", None) else "pair"
        try:
            self.model.to(self.device)
        except Exception as e:  # noqa: BLE001  (no such device, CUDA not compiled in, out of memory)
            raise RewardModelError("cannot put the model on device %r: %s" % (self.device, " ".join(str(e).split())))
        self.model.eval()

    def _encode(self, prompts: Sequence[str], completions: Sequence[Optional[str]]):
        tok = self.tokenizer
        common = dict(truncation=True, max_length=self.max_length, padding=True, return_tensors="pt")
        if self.input_format == "chat":
            texts = []
            for p, c in zip(prompts, completions):
                turns = [{"role": "user", "content": p}]
                if c is not None:
                    turns.append({"role": "assistant", "content": c})
                texts.append(tok.apply_chat_template(turns, tokenize=False))
            return tok(texts, add_special_tokens=False, **common)
        if all(c is None for c in completions):
            return tok(list(prompts), **common)
        if any(c is None for c in completions):
            raise RewardModelError("a batch mixes rows with and without a completion")
        return tok(list(prompts), list(completions), **common)

    def _logits_to_scores(self, logits) -> List[float]:
        logits = logits.double()  # float64 before the difference: no rounding added here
        scores = logits[:, 0] if self.num_labels == 1 else logits[:, 1] - logits[:, 0]
        return [float(s) for s in scores.cpu()]

    def score(self, prompts: Sequence[str], completions: Optional[Sequence[Optional[str]]] = None) -> List[float]:
        """One score per (prompt, completion), in order. ``completions`` None (or None items): prompts alone."""
        prompts = list(prompts)
        completions = [None] * len(prompts) if completions is None else list(completions)
        if len(completions) != len(prompts):
            raise RewardModelError("%d prompts but %d completions" % (len(prompts), len(completions)))
        # Similar lengths batched together waste less padding; rows with and without a completion are never in one
        # batch; each score is put back in its row.
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]) + len(completions[i] or ""))
        batches = []
        for part in ([i for i in order if completions[i] is not None], [i for i in order if completions[i] is None]):
            batches += [part[k:k + self.batch_size] for k in range(0, len(part), self.batch_size)]
        scores = [math.nan] * len(prompts)
        torch = self._torch
        with torch.no_grad():
            for rows in batches:
                batch = self._encode([prompts[i] for i in rows], [completions[i] for i in rows])
                batch = {k: v.to(self.device) for k, v in batch.items()}
                for i, s in zip(rows, self._logits_to_scores(self.model(**batch).logits)):
                    scores[i] = s
        return scores


def _text(value) -> Optional[str]:
    # A string, or a chat (a list of {role, content} messages) as its contents joined by newlines, as the engine
    # reads TRL's conversational columns.
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ndarray":
        parts = [m.get("content") for m in value if isinstance(m, dict)]
        if parts and all(isinstance(p, str) for p in parts):
            return "\n".join(parts)
    return None


def _column(names: Sequence[str], wanted: str, aliases: Sequence[str]) -> Optional[str]:
    if wanted:
        return wanted if wanted in names else None
    for name in names:  # the engine's rule: the first column, in file order, whose name is an alias
        if name.lower() in aliases:
            return name
    return None


def read_samples(path, prompt_col: str = "", response_col: str = "") -> Tuple[List[str], List[Optional[str]], str, str]:
    """(prompts, completions, prompt column, completion column) of a JSONL or Parquet file; rows without a text
    prompt are skipped. Completions are None when the file has no completion column."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise RewardModelError("%s: no such prompts file (give a JSONL or Parquet file)" % path)
    if path.endswith(".parquet"):
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise RewardModelError("reading Parquet prompts needs pyarrow: pip install pyarrow") from None
        table = pq.read_table(path)
        names = table.column_names
        rows = None
    else:
        rows, names = [], []
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # the engine reports malformed lines of the score files; here they are just not scored
                if isinstance(record, dict):
                    rows.append(record)
                    names.extend(k for k in record if k not in names)
    # The engine takes a completion alias before a prompt alias for the same column; mirror that.
    completion = _column(names, response_col, COMPLETION_NAMES)
    prompt = _column([n for n in names if n != completion], prompt_col, PROMPT_NAMES)
    if prompt is None:
        raise RewardModelError("%s: no prompt column (looked for %s; name one with --prompt-col)"
                               % (path, ", ".join(PROMPT_NAMES) if not prompt_col else prompt_col))
    if response_col and completion is None:
        raise RewardModelError("%s: no column %s" % (path, response_col))
    if rows is None:
        prompt_values = table.column(prompt).to_pylist()
        completion_values = table.column(completion).to_pylist() if completion else [None] * len(prompt_values)
    else:
        prompt_values = [r.get(prompt) for r in rows]
        completion_values = [r.get(completion) for r in rows] if completion else [None] * len(rows)
    prompts, completions = [], []
    for p, c in zip(prompt_values, completion_values):
        p = _text(p)
        if p is None:
            continue
        prompts.append(p)
        completions.append(_text(c) if completion else None)
    if completion:
        completions = [c if c is not None else "" for c in completions]
    return prompts, completions, prompt, completion or ""


def score_file(model_dir, samples, out, *, prompt_col: str = "", response_col: str = "",
               batch_size: int = DEFAULT_BATCH_SIZE, max_length: int = DEFAULT_MAX_LENGTH,
               device: Optional[str] = None, dtype: str = "float32") -> str:
    """Scores a JSONL or Parquet file of prompts (and completions) and writes ``out`` as JSONL, one line per
    scored row in file order: {prompt, completion, score} under the prompts file's column names (or "prompt" and
    "completion" when those were found by alias). Returns ``out``."""
    prompts, completions, _, _ = read_samples(samples, prompt_col, response_col)
    if not prompts:
        raise RewardModelError("%s: no row with a text prompt" % os.fspath(samples))
    model = RewardModel(model_dir, batch_size=batch_size, max_length=max_length, device=device, dtype=dtype)
    scores = model.score(prompts, completions)
    p_name, c_name = prompt_col or "prompt", response_col or "completion"
    out = os.fspath(out)
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for p, c, s in zip(prompts, completions, scores):
            score = s if math.isfinite(s) else None
            f.write(json.dumps({p_name: p, c_name: "" if c is None else c, "score": score}) + "\n")
    os.replace(tmp, out)
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rldk.reward_models",
                                     description="Score a prompts/completions file with a local reward model.")
    parser.add_argument("model_dir")
    parser.add_argument("samples")
    parser.add_argument("--out", required=True)
    parser.add_argument("--prompt-col", default="")
    parser.add_argument("--response-col", default="")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    parser.add_argument("--max-length", type=int, default=DEFAULT_MAX_LENGTH)
    parser.add_argument("--device", default=None)
    parser.add_argument("--dtype", default="float32", choices=DTYPES)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        score_file(args.model_dir, args.samples, args.out, prompt_col=args.prompt_col,
                   response_col=args.response_col, batch_size=args.batch_size, max_length=args.max_length,
                   device=args.device, dtype=args.dtype)
    except RewardModelError as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
