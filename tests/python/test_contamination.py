"""rldk contamination against independent oracles: a plain-Python GPT-3 rule (written here), datasketch's MinHash
(legacy scheme, same permutations) and its LSH parameter choice; planted contamination of every kind found with its
span and verdict, a clean eval set with none; --gate exit codes, the index, hostile text in the card."""
import json
import math
import random
import re
import subprocess
import sys

import jsonschema
import numpy as np
import pytest

from conftest import ROOT, write
from test_cli import rldk_binary

from rldk import contamination as ct

sys.path.insert(0, str(ROOT / "bench" / "contamination"))
import planted  # noqa: E402


SCHEMA = json.loads((ROOT / "docs" / "schemas" / "rldk.contamination.v1.schema.json").read_text())


def valid(report):
    jsonschema.Draft202012Validator(SCHEMA).validate(report)
    return report


def run(*args, check=None):
    proc = subprocess.run([rldk_binary(), "contamination", *map(str, args)], capture_output=True, text=True)
    if check is not None:
        assert proc.returncode == check, proc.stderr
    return proc


# ---- the GPT-3 rule, straightforwardly ----

def words(text):
    return re.findall(r"[a-z0-9]+", text.lower())  # ASCII text: lower-case, punctuation and whitespace separate


def gpt3_oracle(train_docs, eval_items, k=10, full=0.8):
    n = min(13, max(8, int(math.floor(np.percentile([len(words(t)) for t in eval_items], 5)))))
    docs_with = {}
    for d, text in enumerate(train_docs):
        w = words(text)
        for g in {tuple(w[i:i + n]) for i in range(len(w) - n + 1)}:
            docs_with[g] = docs_with.get(g, 0) + 1
    out = []
    for text in eval_items:
        w = words(text)
        hit = [i for i in range(len(w) - n + 1) if 1 <= docs_with.get(tuple(w[i:i + n]), 0) <= k]
        covered = set()
        for i in hit:
            covered.update(range(i, i + n))
        spans = []
        for i in hit:
            if spans and i < spans[-1][1]:
                spans[-1][1] = i + n
            else:
                spans.append([i, i + n])
        verdict = "clean" if not hit else "full" if len(covered) / len(w) >= full else "partial"
        out.append({"verdict": verdict, "covered": len(covered), "spans": [s[1] - s[0] for s in spans]})
    return n, out


@pytest.mark.parametrize("seed", range(6))
def test_ngram_method_agrees_with_plain_python_gpt3_rule(tmp_path, seed):
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(40)] + ["The", "a,", "b.", "C!", "7", "42"]
    items = [" ".join(rng.choice(vocab) for _ in range(rng.randint(6, 40))) for _ in range(30)]
    docs = [" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 80))) for _ in range(60)]
    for item in items[:15]:  # plant fragments of 5..all words, some in many documents (boilerplate)
        w = item.split()
        a = rng.randrange(len(w))
        frag = " ".join(w[a:a + rng.randint(5, len(w))])
        for _ in range(rng.choice([1, 1, 2, 12])):
            d = rng.randrange(len(docs))
            docs[d] = docs[d] + " " + frag + " " + rng.choice(vocab)
    write(tmp_path / "train.jsonl", "".join(json.dumps({"text": d}) + "\n" for d in docs if d))
    write(tmp_path / "eval.jsonl", "".join(json.dumps({"question": t}) + "\n" for t in items))
    n, expected = gpt3_oracle([d for d in docs if d], items)
    report = valid(ct.check(train=tmp_path / "train.jsonl", eval=tmp_path / "eval.jsonl", methods="ngram").json)
    assert report["eval_sets"][0]["n"] == n
    assert report["eval_sets"][0]["percentile_words"] == pytest.approx(
        np.percentile([len(words(t)) for t in items], 5))
    for got, want, text in zip(report["items"], expected, items):
        ng = got["texts"][0]["ngram"]
        assert ng["checkable"] == (len(words(text)) >= n)
        assert got["verdict"] == want["verdict"], text
        assert ng["covered"] == want["covered"]
        assert [s["words"] for s in ng["spans"]] == want["spans"]
    assert any(e["verdict"] != "clean" for e in expected) and any(e["verdict"] == "clean" for e in expected)


# ---- MinHash and LSH against datasketch ----

@pytest.mark.parametrize("scheme,dtype", [("legacy", np.uint64), ("affine32", np.uint32)])
def test_minhash_signatures_and_estimates_equal_datasketch(scheme, dtype):
    datasketch = pytest.importorskip("datasketch")
    a, b = ct.permutations(128, 7, scheme)
    perms = (np.array(a, dtype=dtype), np.array(b, dtype=dtype))
    rng = random.Random(3)
    base = " ".join(f"t{rng.randrange(300)}" for _ in range(120))
    texts = [base, base.replace("t1 ", "x "), " ".join(base.split()[:90]), "Ünïcode wörds ärë fine here too",
             "short", ""]
    sigs, sketches = [], []
    for t in texts:
        sh = ct.shingles32(t, 5)
        m = datasketch.MinHash(num_perm=128, permutations=perms, scheme=scheme,
                               hashfunc=lambda v: int.from_bytes(v, "little"))
        for h in sh:
            m.update(int(h).to_bytes(4, "little"))
        sig = ct.minhash(sh, 128, 7, scheme)
        assert sig == [int(v) for v in m.hashvalues]
        sigs.append(sig)
        sketches.append(m)
    for i in range(len(texts)):
        for j in range(len(texts)):
            ours = sum(x == y for x, y in zip(sigs[i], sigs[j])) / 128
            assert ours == sketches[i].jaccard(sketches[j])


@pytest.mark.parametrize("threshold,num_perm", [(0.5, 128), (0.7, 128), (0.8, 128), (0.9, 128), (0.7, 256),
                                                (0.8, 64), (0.3, 32), (0.95, 200)])
def test_lsh_bands_rows_equal_datasketch(threshold, num_perm):
    datasketch = pytest.importorskip("datasketch")
    lsh = datasketch.MinHashLSH(threshold=threshold, num_perm=num_perm)
    assert ct.lsh_parameters(threshold, num_perm) == (lsh.b, lsh.r)


# ---- planted contamination ----

@pytest.fixture(scope="module")
def planted_corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("planted")
    plan = planted.generate(root, train_bytes=6_000_000, files=3, per_kind=3, clean_items=30)
    return root, plan


def test_planted_contamination_found_with_spans_and_verdicts(planted_corpus, tmp_path):
    root, plan = planted_corpus
    out = tmp_path / "out"
    proc = run("--train", root / "train", "--eval", root / "eval_contaminated.jsonl", root / "eval_clean.jsonl",
               "--out", out, "--json", "--gate", "--threads", 2, check=1)
    report = valid(json.loads(proc.stdout))
    assert report == json.loads((out / "contamination.json").read_text())
    items = [i for i in report["items"] if i["set"] == 0]
    assert len(items) == len(plan)
    evals = [json.loads(line) for line in (root / "eval_contaminated.jsonl").read_text().splitlines()]
    for item in items:
        p = plan[item["row"]]
        text = evals[item["row"] - 1]["question"]
        assert item["verdict"] == planted.EXPECTED[p["kind"]], (p, item)
        if p["kind"] == "clean":
            continue
        spans = item["texts"][0]["ngram"]["spans"]
        assert spans and all(s["train"]["file"] == p["file"] and s["train"]["row"] == p["row"] for s in spans), p
        for s in spans:  # the quote is the eval text at the span's bytes (cut at 160 bytes)
            quoted = text.encode()[s["begin"]:s["end"]].decode()
            assert s["quote"] == quoted or (s["quote"].endswith("...") and quoted.startswith(s["quote"][:-3]))
        if p["kind"] in ("verbatim", "whitespace", "casing"):
            last_word_end = list(re.finditer(r"[A-Za-z0-9]+", text))[-1].end()  # the final "." is not a word
            assert len(spans) == 1 and (spans[0]["begin"], spans[0]["end"]) == (0, last_word_end)
            assert item["texts"][0]["minhash"]["verdict"] == "full"
            assert item["texts"][0]["minhash"]["jaccard"] == 1.0
            assert item["texts"][0]["llama2"]["category"] == "dirty"
        if p["kind"] == "numbers":
            number = re.search(r"\d+", text)  # the changed number splits the match in two and is in neither part
            assert len(spans) == 2 and all(not s["begin"] <= number.start() < s["end"] for s in spans)
            assert item["texts"][0]["llama2"]["fraction"] == 1.0  # the changed number is within the skip budget
        if p["kind"] == "partial30":
            assert item["texts"][0]["llama2"]["category"] == "not clean, not dirty"
    clean = [i for i in report["items"] if i["set"] == 1]
    assert clean and all(i["verdict"] == "clean" for i in clean)
    assert report["eval_sets"][1]["full"] + report["eval_sets"][1]["partial"] == 0
    # The split: dirty.jsonl holds exactly the contaminated rows, clean.jsonl the rest, as they were read.
    dirty = [json.loads(line) for line in (out / "dirty.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in dirty) == sorted(r for r, p in plan.items() if p["kind"] != "clean")
    assert all(r["kind"] != "clean" for r in dirty)
    clean_rows = [json.loads(line) for line in (out / "clean.jsonl").read_text().splitlines()]
    assert len(clean_rows) + len(dirty) == len(plan) + 30


def test_threads_do_not_change_the_report(planted_corpus):
    root, _ = planted_corpus
    one = run("--train", root / "train", "--eval", root / "eval_contaminated.jsonl", "--json", "--threads", 1,
              check=0).stdout
    two = run("--train", root / "train", "--eval", root / "eval_contaminated.jsonl", "--json", "--threads", 2,
              check=0).stdout
    assert one == two


def test_gate_exit_codes_and_bad_input(tmp_path):
    item = "the quick brown fox jumps over the lazy dog while the farmer counts twelve sheep in the field"
    write(tmp_path / "train.jsonl", json.dumps({"prompt": item}) + "\n{not json\n" +
          json.dumps({"prompt": "nothing to see here at all"}) + "\n")
    write(tmp_path / "dirty.jsonl", json.dumps({"question": item}) + "\n")
    write(tmp_path / "clean.jsonl", json.dumps({"question": item.replace("fox", "cat").replace("sheep", "cows")
                                                .replace("lazy", "busy")}) + "\n")
    proc = run("--train", tmp_path / "train.jsonl", "--eval", tmp_path / "dirty.jsonl", "--gate", check=1)
    assert "train.jsonl:2" in proc.stderr  # the malformed line is named, and the check carried on
    run("--train", tmp_path / "train.jsonl", "--eval", tmp_path / "clean.jsonl", "--gate", check=0)
    proc = run("--train", tmp_path / "missing.jsonl", "--eval", tmp_path / "clean.jsonl", "--gate", check=2)
    assert "missing.jsonl" in proc.stderr
    run("--eval", tmp_path / "clean.jsonl", check=2)
    run("--train", tmp_path / "train.jsonl", "--eval", tmp_path / "clean.jsonl", "--method", "bogus", check=2)
    # The older tool's command runs the same check.
    older = subprocess.run([rldk_binary(), "data-contamination", "--train", str(tmp_path / "train.jsonl"), "--val",
                            str(tmp_path / "dirty.jsonl"), "--gate"], capture_output=True, text=True)
    assert older.returncode == 1, older.stderr


def test_index_gives_the_same_verdicts_and_refuses_damage(planted_corpus, tmp_path):
    root, plan = planted_corpus
    idx = tmp_path / "train.idx"
    subprocess.run([rldk_binary(), "contamination", "index", "--train", str(root / "train"), "-o", str(idx),
                    "--ngram", "13,11"], check=True, capture_output=True)
    via = valid(json.loads(run("--index", idx, "--eval", root / "eval_contaminated.jsonl", "--json", check=0).stdout))
    direct = json.loads(run("--train", root / "train", "--eval", root / "eval_contaminated.jsonl", "--json",
                            "--method", "ngram,llama2", check=0).stdout)
    assert [i["verdict"] for i in via["items"]] == [i["verdict"] for i in direct["items"]]
    assert [i["texts"][0]["ngram"]["spans"] for i in via["items"]] == \
        [i["texts"][0]["ngram"]["spans"] for i in direct["items"]]
    damaged = bytearray(idx.read_bytes())
    damaged[len(damaged) // 2] ^= 1
    write(tmp_path / "bad.idx", bytes(damaged), mode="wb")
    proc = run("--index", tmp_path / "bad.idx", "--eval", root / "eval_contaminated.jsonl", check=2)
    assert "checksum" in proc.stderr and "bad.idx" in proc.stderr


def test_hostile_text_is_escaped_in_the_card(tmp_path):
    evil = '<script>alert(1)</script> <img src=x onerror=alert(2)> "quoted" & the rest of a long enough item here'
    write(tmp_path / "train.jsonl", json.dumps({"text": evil}) + "\n")
    write(tmp_path / "eval.jsonl", json.dumps({"question": evil}) + "\n")
    out = tmp_path / "out"
    run("--train", tmp_path / "train.jsonl", "--eval", tmp_path / "eval.jsonl", "--out", out, check=0)
    html = (out / "contamination.html").read_text()
    assert "alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(2)&gt; &quot;quoted&quot; &amp;" in html
    assert "<script" not in html and "<img" not in html and "</script" not in html
    md = (out / "contamination.md").read_text()
    assert "<script>" not in md.replace("`<script>", "")  # only inside code spans


def test_python_api_matches_cli(planted_corpus):
    root, _ = planted_corpus
    report = ct.check(train=root / "train", eval=root / "eval_contaminated.jsonl")
    cli = run("--train", root / "train", "--eval", root / "eval_contaminated.jsonl", "--json", check=0).stdout
    assert report.json_text + "\n" == cli
    assert report.contaminated


def test_hugging_face_datasets_saved_to_disk_are_read(tmp_path):
    datasets = pytest.importorskip("datasets")
    item = "a prompt that was copied from the benchmark into the training pool word for word by accident"
    datasets.Dataset.from_dict({"prompt": [item, "an unrelated prompt about something else entirely"],
                                "reward_model": [{"ground_truth": "42"}, {"ground_truth": "7"}]}) \
        .save_to_disk(str(tmp_path / "pool"))
    import pyarrow as pa
    import pyarrow.feather as feather
    feather.write_feather(pa.table({"question": [item]}), str(tmp_path / "eval.feather"))  # Arrow's file format
    for train in (tmp_path / "pool", next((tmp_path / "pool").glob("*.arrow"))):
        report = json.loads(run("--train", train, "--eval", tmp_path / "eval.feather", "--json", check=0).stdout)
        assert report["items"][0]["verdict"] == "full", train
        assert report["items"][0]["texts"][0]["ngram"]["spans"][0]["train"]["field"] == "prompt"
        assert report["train"]["documents"] == 2 + 2  # prompts and the nested reward_model/ground_truth answers
