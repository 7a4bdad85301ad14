"""A real flow for rldk evals (issue 14, acceptance 4): two checkpoints of a tiny GPT-2 (random init, and the same
model trained a few hundred steps) answer a generated eval set, their per-item outputs are written as JSONL, and
`rldk evals compare` gives a paired result and the eval card, which headless Chromium renders."""
import json
import random
import shutil
import subprocess

import pytest

from tiny_models import make_model, make_tokenizer

torch = pytest.importorskip("torch")

NUMBERS = "one two three four five".split()
FILLER = "the a cat dog sat ran on under mat log big small red blue".split()


def _items(rng, n):
    """Two tasks: 'count' (the next number word of a cycle) and 'alternate' (yes/no alternation)."""
    items = []
    for i in range(n):
        start, length = rng.randrange(5), rng.randrange(2, 4)
        words = [rng.choice(FILLER) for _ in range(rng.randrange(0, 3))]
        words += [NUMBERS[(start + k) % 5] for k in range(length)]
        items.append(("count", f"count-{i}", " ".join(words), NUMBERS[(start + length) % 5]))
        first, length = rng.randrange(2), rng.randrange(2, 5)
        words = [rng.choice(FILLER) for _ in range(rng.randrange(0, 3))]
        words += [("yes", "no")[(first + k) % 2] for k in range(length)]
        items.append(("alternate", f"alternate-{i}", " ".join(words), ("yes", "no")[(first + length) % 2]))
    return items


def _train(model, tok, rng, steps=300):
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(steps):
        batch = [p + " " + t for _, _, p, t in _items(rng, 8)]
        enc = tok(batch, return_tensors="pt", padding=True)
        labels = enc["input_ids"].masked_fill(enc["attention_mask"] == 0, -100)
        loss = model(**enc, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()


def _evaluate(model, tok, items, path):
    with open(path, "w") as f, torch.no_grad():
        for task, item_id, prompt, target in items:
            enc = tok([prompt], return_tensors="pt", padding=True)
            logits = model(**enc).logits[0, -1]
            output = tok.convert_ids_to_tokens(int(logits.argmax()))
            f.write(json.dumps({"item_id": item_id, "task": task, "prompt": prompt, "output": output,
                                "correct": output == target}) + "\n")


def test_two_checkpoints_of_a_tiny_model_compared_paired(tmp_path):
    tok = make_tokenizer()
    eval_items = _items(random.Random(1), 100)
    before = make_model(tok, seed=0)
    _evaluate(before, tok, eval_items, tmp_path / "step0.jsonl")
    _train(before, tok, random.Random(2))  # different prompts than the eval set's
    _evaluate(before, tok, eval_items, tmp_path / "step300.jsonl")
    out = tmp_path / "card"
    proc = subprocess.run(["rldk", "evals", "compare", tmp_path / "step0.jsonl", tmp_path / "step300.jsonl",
                           "--seed", "0", "--reps", "2000", "--json", "--out", out, "--gate"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr  # B is not worse: the gate passes
    card = json.loads(proc.stdout)
    assert card["a"] == "step0" and card["b"] == "step300"
    by_task = {t["task"]: t for t in card["tasks"]}
    assert set(by_task) == {"count", "alternate"}
    for t in by_task.values():
        assert t["design"] == "paired" and t["items"] == 100
        assert t["paired"]["n"] == 100
    assert card["verdict"] in ("better", "mixed", "no detectable difference")
    assert any(t["verdict"] == "better" and t["ci_low"] > 0 for t in by_task.values()), by_task
    html = (out / "evals.html").read_text()
    assert "<svg" in html and "step300" in html
    browser = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    if browser is None:
        pytest.skip("no headless browser to render the card")
    png = tmp_path / "card.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--window-size=1100,2400", "--screenshot=" + str(png), (out / "evals.html").as_uri()],
                   capture_output=True, timeout=120)
    from PIL import Image
    image = Image.open(png).convert("L")
    colours = image.getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 50, "the card rendered blank"
