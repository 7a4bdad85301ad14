"""`rldk reward drift A B --prompts P` with real reward models (issue 13, acceptance 3): two tiny, randomly
initialised sequence-classification models built here (a GPT-2 with one label and no pad token, a BERT with two
labels) score 40 prompt/completion pairs; the CLI (which runs the scorer as a child process) and the Python API give
the correlations, ranking agreement, sign-flip rate and mean difference that scipy computes from scores obtained
with transformers directly, one sample at a time. Bad model folders are clear usage errors (exit 2)."""
import json
import os
import pathlib
import subprocess
import sys

import jsonschema
import numpy as np
import pytest
from scipy import stats

import tiny_models  # noqa: F401  (forces offline mode before transformers is imported)
import rldk
from rldk import reward_models
from test_cli import rldk_binary

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TOL = 1e-6
SCHEMA = json.loads((pathlib.Path(__file__).resolve().parents[2] / "docs" / "schemas" /
                     "rldk.reward-drift.v1.schema.json").read_text())


def _save(model, tokenizer, path):
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    base = tmp_path_factory.mktemp("rm")
    vocab = len(tiny_models.make_tokenizer())
    # A: a decoder reward model (score read at the last token), its tokenizer without a pad token.
    tok_a = tiny_models.make_tokenizer()
    tok_a.pad_token = None
    torch.manual_seed(1)
    model_a = transformers.GPT2ForSequenceClassification(transformers.GPT2Config(
        vocab_size=vocab, n_positions=64, n_embd=32, n_layer=2, n_head=2, num_labels=1,
        bos_token_id=tok_a.eos_token_id, eos_token_id=tok_a.eos_token_id))
    # B: an encoder with two labels (score = logit[1] - logit[0]).
    tok_b = tiny_models.make_tokenizer()
    torch.manual_seed(2)
    model_b = transformers.BertForSequenceClassification(transformers.BertConfig(
        vocab_size=vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        max_position_embeddings=64, num_labels=2, pad_token_id=tok_b.pad_token_id))
    a = _save(model_a, tok_a, base / "rm_a")
    b = _save(model_b, tok_b, base / "rm_b")

    rng = np.random.default_rng(0)
    rows = []
    for prompt in tiny_models.PROMPTS:  # 8 prompts x 5 distinct completions
        seen = set()
        while len(seen) < 5:
            seen.add(" ".join(rng.choice(tiny_models.WORDS, size=int(rng.integers(2, 9)))))
        rows += [(prompt, c) for c in sorted(seen)]
    prompts = base / "prompts.jsonl"
    prompts.write_text("".join(json.dumps({"prompt": p, "completion": c}) + "\n" for p, c in rows))
    # float64 for the statistics: in float32 batching alone moves these tiny scores by ~1e-7, and the
    # within-prompt correlations by ~1e-5.
    return {"a": a, "b": b, "rows": rows, "prompts": str(prompts), "base": base,
            "scores_a": reference_scores(a, rows), "scores_b": reference_scores(b, rows),
            "f32_a": reference_scores(a, rows, torch.float32), "f32_b": reference_scores(b, rows, torch.float32)}


def reference_scores(model_dir, rows, dtype=torch.float64):
    """transformers alone, one sample at a time (no padding): the text pair, the logit or logit[1] - logit[0]."""
    tok = transformers.AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(model_dir, local_files_only=True,
                                                                            dtype=dtype)
    model.eval()
    scores = []
    with torch.no_grad():
        for prompt, completion in rows:
            logits = model(**tok(prompt, completion, return_tensors="pt")).logits[0]
            scores.append(float(logits[0]) if len(logits) == 1 else float(logits[1] - logits[0]))
    return np.array(scores)


def expected(rows, a, b):
    """docs/reward.md's definitions, computed with scipy."""
    prompts = np.array([p for p, _ in rows])
    ca, cb = a.copy(), b.copy()
    concordant = untied = 0
    taus = []
    for p in np.unique(prompts):
        m = prompts == p
        ca[m] -= a[m].mean()
        cb[m] -= b[m].mean()
        tau = stats.kendalltau(a[m], b[m]).statistic  # tau-b; no ties among these scores, so tau-a
        pairs = m.sum() * (m.sum() - 1) // 2
        taus.append(tau)
        concordant += (1 + tau) / 2 * pairs
        untied += pairs
        # The same count, pair by pair, as the definition reads.
        idx = np.flatnonzero(m)
        direct = sum((a[i] - a[j]) * (b[i] - b[j]) > 0 for x, i in enumerate(idx) for j in idx[x + 1:])
        assert direct == pytest.approx((1 + tau) / 2 * pairs)
    d = b - a
    return {
        "pearson": stats.pearsonr(a, b)[0], "spearman": stats.spearmanr(a, b)[0],
        "within_pearson": stats.pearsonr(ca, cb)[0], "within_spearman": stats.spearmanr(ca, cb)[0],
        "within_kendall": stats.kendalltau(ca, cb).statistic,
        "ranking_agreement": concordant / untied, "sign_flip_rate": 1 - concordant / untied,
        "mean_difference": d.mean(), "sd_difference": d.std(ddof=1),
        "slope": stats.linregress(a, b).slope, "within_slope": stats.linregress(ca, cb).slope,
        "drift_magnitude": abs(b.mean() - a.mean()), "taus": taus,
    }


def check(doc, want, n):
    jsonschema.validate(doc, SCHEMA)
    assert doc["paired"] == n and doc["a"]["unpaired"] == 0 and doc["b"]["unpaired"] == 0
    assert doc["prompts"] == 8 and doc["prompt_groups"] == 8
    for key in ("pearson", "spearman", "within_pearson", "within_spearman"):
        assert doc[key]["r"] == pytest.approx(want[key], abs=TOL), key
    pairs = doc["same_prompt_pairs"]
    assert pairs["pairs"] == 8 * 10 and pairs["tied"] == 0
    assert pairs["ranking_agreement"] == pytest.approx(want["ranking_agreement"], abs=TOL)
    assert pairs["sign_flip_rate"] == pytest.approx(want["sign_flip_rate"], abs=TOL)
    assert doc["difference"]["mean"] == pytest.approx(want["mean_difference"], abs=TOL)
    assert doc["difference"]["sd"] == pytest.approx(want["sd_difference"], abs=TOL)
    assert doc["scale_fit"]["slope"] == pytest.approx(want["slope"], abs=10 * TOL)
    assert doc["scale_fit"]["within_slope"] == pytest.approx(want["within_slope"], abs=10 * TOL)
    assert doc["older_tool_fields"]["drift_magnitude"] == pytest.approx(want["drift_magnitude"], abs=TOL)


def run_drift(*args, env=None):
    return subprocess.run([rldk_binary(), "reward", "drift"] + [str(a) for a in args], capture_output=True,
                          text=True, timeout=600, env=env)


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def test_scorer_matches_transformers_one_sample_at_a_time(setup):
    rows = setup["rows"]
    for side, batch in (("a", 7), ("b", 16)):
        model = reward_models.RewardModel(setup[side], batch_size=batch, device="cpu")
        assert model.input_format == "pair"  # the tiny tokenizer has no chat template
        scores = model.score([p for p, _ in rows], [c for _, c in rows])
        assert np.allclose(scores, setup["f32_" + side], rtol=0, atol=1e-6)
        exact = reward_models.RewardModel(setup[side], batch_size=batch, dtype="float64")
        assert np.allclose(exact.score([p for p, _ in rows], [c for _, c in rows]), setup["scores_" + side],
                           rtol=0, atol=1e-12)
        # Deterministic, and independent of the batch size.
        again = reward_models.RewardModel(setup[side], batch_size=1).score([p for p, _ in rows], [c for _, c in rows])
        assert np.allclose(scores, again, rtol=0, atol=1e-6)
    # The GPT-2 tokenizer had no pad token: eos pads, in the tokenizer and the model's config.
    model = reward_models.RewardModel(setup["a"], dtype="float64", batch_size=3)
    assert model.tokenizer.pad_token == "<eos>" and model.model.config.pad_token_id == model.tokenizer.eos_token_id
    # A row without a completion scores the prompt alone; rows with and without one mix in a call.
    tok = transformers.AutoTokenizer.from_pretrained(setup["a"], local_files_only=True)
    ref = transformers.AutoModelForSequenceClassification.from_pretrained(setup["a"], local_files_only=True,
                                                                          dtype=torch.float64).eval()
    mixed = [(p, c if k % 2 else None) for k, (p, c) in enumerate(rows[:8])]
    got = model.score([p for p, _ in mixed], [c for _, c in mixed])
    with torch.no_grad():
        for (p, c), s in zip(mixed, got):
            enc = tok(p, return_tensors="pt") if c is None else tok(p, c, return_tensors="pt")
            assert s == pytest.approx(float(ref(**enc).logits[0, 0]), abs=1e-12)


def test_cli_with_two_models_matches_scipy_on_direct_scores(setup, tmp_path):
    want = expected(setup["rows"], setup["scores_a"], setup["scores_b"])
    out = tmp_path / "report"
    proc = run_drift("--json", setup["a"], setup["b"], "--prompts", setup["prompts"], "--batch-size", "6",
                     "--device", "cpu", "--dtype", "float64", "--out", out)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    check(doc, want, len(setup["rows"]))
    assert doc["a"]["column"] == "score" and doc["b"]["column"] == "score"
    assert doc["a"]["format"] == "reward model " + setup["a"] and doc["b"]["format"] == "reward model " + setup["b"]
    # The scores are kept in the report folder, one line per prompt/completion, in file order.
    for side in "ab":
        kept = read_jsonl(out / ("reward_drift_scores_%s.jsonl" % side))
        assert [(r["prompt"], r["completion"]) for r in kept] == setup["rows"]
        assert np.allclose([r["score"] for r in kept], setup["scores_" + side], rtol=0, atol=1e-12)
    assert json.loads((out / "reward_drift.json").read_text()) == doc
    # Kendall on the per-prompt-centred scores (pooled over prompts) is not ranking_agreement: that one counts
    # same-prompt pairs only, i.e. the pair-weighted mean of the per-prompt taus.
    assert np.isfinite(want["within_kendall"]) and len(want["taus"]) == 8


def test_python_api_with_a_model_and_a_score_file(setup, tmp_path):
    rows = setup["rows"]
    want = expected(rows, setup["scores_a"], setup["scores_b"])
    kept = tmp_path / "scores"
    doc = rldk.reward.drift(setup["a"], setup["b"], prompts=setup["prompts"], batch_size=5, device="cpu",
                            dtype="float64", scores_dir=kept)
    check(doc, want, len(rows))
    assert doc["a"]["format"] == "reward model " + setup["a"]
    assert sorted(os.listdir(kept)) == ["scores_a.jsonl", "scores_b.jsonl"]
    # B as a score file scored elsewhere: the same numbers (CLI and API).
    b_file = tmp_path / "b.jsonl"
    b_file.write_text("".join(json.dumps({"prompt": p, "completion": c, "rm_b": float(s)}) + "\n"
                              for (p, c), s in zip(rows, setup["scores_b"])))
    check(rldk.reward.drift(setup["a"], b_file, prompts=setup["prompts"], dtype="float64"), want, len(rows))
    proc = run_drift("--json", setup["a"], b_file, "--prompts", setup["prompts"], "--dtype", "float64")
    assert proc.returncode == 0, proc.stderr
    check(json.loads(proc.stdout), want, len(rows))


def test_chat_template_when_the_tokenizer_has_one(setup, tmp_path):
    tok = transformers.AutoTokenizer.from_pretrained(setup["b"], local_files_only=True)
    tok.chat_template = "{% for m in messages %}{{ m['role'] }} {{ m['content'] }} {% endfor %}"
    model = transformers.AutoModelForSequenceClassification.from_pretrained(setup["b"], local_files_only=True)
    path = _save(model, tok, tmp_path / "rm_chat")
    scorer = reward_models.RewardModel(path, batch_size=4)
    assert scorer.input_format == "chat"
    rows = setup["rows"][:10]
    got = scorer.score([p for p, _ in rows], [c for _, c in rows])
    model.eval()
    with torch.no_grad():
        for (p, c), s in zip(rows, got):
            text = tok.apply_chat_template([{"role": "user", "content": p}, {"role": "assistant", "content": c}],
                                           tokenize=False)
            assert text == "user %s assistant %s " % (p, c)
            logits = model(**tok(text, add_special_tokens=False, return_tensors="pt")).logits[0]
            assert s == pytest.approx(float(logits[1] - logits[0]), abs=1e-5)


def test_bad_model_folders_are_usage_errors(setup, tmp_path):
    prompts = setup["prompts"]
    # A missing folder.
    proc = run_drift(tmp_path / "no_such_model", setup["b"], "--prompts", prompts)
    assert proc.returncode == 2 and "no_such_model" in proc.stderr and "no such" in proc.stderr.lower(), proc.stderr
    # A folder that is not a model (no config.json) is read as sample files, and says so when that fails.
    empty = tmp_path / "not_a_model"
    empty.mkdir()
    (empty / "weights.bin").write_bytes(b"\0" * 16)
    proc = run_drift(empty, setup["b"], "--prompts", prompts)
    assert proc.returncode == 2 and "config.json" in proc.stderr, proc.stderr
    # A model folder without --prompts, and --prompts without a model folder.
    proc = run_drift(setup["a"], setup["b"])
    assert proc.returncode == 2 and "--prompts" in proc.stderr, proc.stderr
    proc = run_drift(prompts, prompts, "--prompts", prompts)
    assert proc.returncode == 2 and "--prompts" in proc.stderr, proc.stderr
    proc = run_drift(setup["a"], setup["b"], "--prompts", tmp_path / "no_prompts.jsonl")
    assert proc.returncode == 2 and "no such prompts file" in proc.stderr, proc.stderr
    # config.json that holds no loadable model: the scorer's one-line reason, no traceback.
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{}")
    proc = run_drift(broken, setup["b"], "--prompts", prompts)
    assert proc.returncode == 2 and "cannot load" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    # Three labels: no single score.
    torch.manual_seed(3)
    tok = transformers.AutoTokenizer.from_pretrained(setup["b"], local_files_only=True)
    three = transformers.BertForSequenceClassification(transformers.BertConfig(
        vocab_size=len(tok), hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=64, num_labels=3))
    path = _save(three, tok, tmp_path / "three")
    proc = run_drift(path, setup["b"], "--prompts", prompts)
    assert proc.returncode == 2 and "3 labels" in proc.stderr, proc.stderr
    with pytest.raises(ValueError, match="3 labels"):
        rldk.reward.drift(path, setup["b"], prompts=prompts)
    with pytest.raises(ValueError, match="prompts"):
        rldk.reward.drift(setup["a"], setup["b"])


def test_missing_torch_or_transformers_is_one_clear_line(setup, tmp_path):
    # An interpreter whose transformers cannot be imported: a module of that name that fails to import.
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "transformers.py").write_text(
        "raise ImportError(\"No module named 'transformers'\", name='transformers')\n")
    env = dict(os.environ, PYTHONPATH=str(shadow), RLDK_PYTHON=sys.executable)
    proc = run_drift(setup["a"], setup["b"], "--prompts", setup["prompts"], env=env)
    assert proc.returncode == 2, proc.stderr
    assert "pip install torch transformers" in proc.stderr and "transformers" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    # No such interpreter.
    env = dict(os.environ, RLDK_PYTHON=str(tmp_path / "no_python"))
    proc = run_drift(setup["a"], setup["b"], "--prompts", setup["prompts"], env=env)
    assert proc.returncode == 2 and "RLDK_PYTHON" in proc.stderr, proc.stderr
