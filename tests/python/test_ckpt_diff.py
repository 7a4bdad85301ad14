"""rldk ckpt diff against torch: checkpoints written by transformers' save_pretrained (sharded and not, fp32 and bf16),
by torch.save (plain and wrapped state dicts, pytorch_model.bin folders and their sharded index), and the refusals:
malicious pickles (proved inert: the payload would create a file, and the file does not appear), lying safetensors
headers, legacy and distributed checkpoints. Every statistic is recomputed here by torch in float64.

RLDK_BIN names the binary (default: the rldk beside this Python, else the one on PATH).
"""
import copy
import json
import os
import pathlib
import pickle
import shutil
import struct
import subprocess
import sys
import zipfile

import pytest

torch = pytest.importorskip("torch")
safetensors_torch = pytest.importorskip("safetensors.torch")

sys.path.insert(0, os.path.dirname(__file__))
import tiny_models  # noqa: E402  (sets the offline environment)


def rldk_bin():
    beside = os.path.join(os.path.dirname(sys.executable), "rldk")
    return os.environ.get("RLDK_BIN") or (beside if os.path.exists(beside) else shutil.which("rldk"))


def run(*args, check_code=None):
    proc = subprocess.run([rldk_bin(), *map(str, args)], capture_output=True, text=True)
    if check_code is not None:
        assert proc.returncode == check_code, (proc.returncode, proc.stdout, proc.stderr)
    return proc


SCHEMA = pathlib.Path(__file__).resolve().parents[2] / "docs" / "schemas" / "rldk.ckpt-diff.v1.schema.json"


def validate(doc):
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(doc)


def diff_json(a, b, *extra):
    proc = run("ckpt", "diff", a, b, "--json", *extra)
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    validate(doc)
    return doc


def torch_stats(a, b):
    """The statistics rldk reports, in float64 over positions where both sides are finite."""
    x, y = a.detach().reshape(-1).to(torch.float64), b.detach().reshape(-1).to(torch.float64)
    fin = torch.isfinite(x) & torch.isfinite(y)
    xm, ym = torch.where(fin, x, 0.0), torch.where(fin, y, 0.0)
    d = xm - ym
    if not a.is_floating_point() and not b.is_floating_point():
        # Integers are compared exactly: the difference in int64 first (float64 would round 2**62 + 1).
        d = (a.reshape(-1).to(torch.int64) - b.reshape(-1).to(torch.int64)).to(torch.float64)
    l2, na, nb = d.norm().item(), xm.norm().item(), ym.norm().item()
    cos = 1.0 if na == 0 and nb == 0 else 0.0 if na == 0 or nb == 0 else (xm @ ym).item() / (na * nb)
    rel = (l2 / na) if na > 0 else (0.0 if l2 == 0 else float("inf"))
    return {"l2": l2, "norm_a": na, "norm_b": nb, "cosine": cos, "relative_change": rel,
            "max_abs_delta": d.abs().max().item() if d.numel() else 0.0,
            "nan_a": int(torch.isnan(x).sum()), "nan_b": int(torch.isnan(y).sum()),
            "inf_a": int(torch.isinf(x).sum()), "inf_b": int(torch.isinf(y).sum())}


# rldk's JSON writes non-finite numbers as strings (strict JSON has no token for them).
NONFINITE = {"Infinity": float("inf"), "-Infinity": float("-inf"), "NaN": float("nan")}


def assert_matches_torch(doc, sd_a, sd_b, rel=1e-9):
    by_name = {t["name"]: t for t in doc["tensors"]}
    common = sorted(set(sd_a) & set(sd_b))
    assert common, "no common tensors"
    for name in common:
        t = by_name[name]
        assert t["shape_a"] == list(sd_a[name].shape)
        want = torch_stats(sd_a[name], sd_b[name])
        for key, value in want.items():
            got = NONFINITE.get(t[key], t[key]) if isinstance(t[key], str) else t[key]
            if isinstance(value, int):
                assert got == value, (name, key, got, value)
            else:
                assert got == pytest.approx(value, rel=rel, abs=1e-12), (name, key, got, value)
    assert {t["name"] for t in doc["tensors"] if t["status"] == "only_in_a"} == set(sd_a) - set(sd_b)
    assert {t["name"] for t in doc["tensors"] if t["status"] == "only_in_b"} == set(sd_b) - set(sd_a)


@pytest.fixture(scope="module")
def models():
    tok = tiny_models.make_tokenizer()
    base = tiny_models.make_model(tok, seed=0)
    trained = tiny_models.make_model(tok, seed=0)
    with torch.no_grad():
        gen = torch.Generator().manual_seed(1)
        for name, p in trained.named_parameters():
            if ".h.1." in name or "ln_f" in name:  # only the last block and the final norm move
                p.add_(0.01 * torch.randn(p.shape, generator=gen))
    return base, trained


def state(model, dtype=torch.float32):
    return {k: v.detach().clone().to(dtype) for k, v in model.state_dict().items()}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("shard", [None, "40KB"])
def test_save_pretrained_safetensors(tmp_path, models, dtype, shard):
    base, trained = models
    kwargs = {"max_shard_size": shard} if shard else {}
    copy.deepcopy(base).to(dtype).save_pretrained(tmp_path / "a", **kwargs)
    copy.deepcopy(trained).to(dtype).save_pretrained(tmp_path / "b", **kwargs)
    if shard:
        assert (tmp_path / "a" / "model.safetensors.index.json").exists()
    doc = diff_json(tmp_path / "a", tmp_path / "b")
    assert doc["schema"] == "rldk.ckpt-diff/v1"
    assert doc["a"]["format"] == ("safetensors-sharded" if shard else "safetensors")
    sd_a = safetensors_load_folder(tmp_path / "a")
    sd_b = safetensors_load_folder(tmp_path / "b")
    assert_matches_torch(doc, sd_a, sd_b)
    # Only the last block and the final norm changed: the groups say so.
    groups = {g["name"]: g for g in doc["groups"]}
    assert groups["h.0"]["changed"] == 0 and groups["h.0"]["l2"] == 0
    assert groups["h.1"]["changed"] == groups["h.1"]["tensors"] > 0
    assert doc["summary"]["changed"] == sum(1 for k in sd_a if not torch.equal(sd_a[k], sd_b[k]))
    assert doc["top_movers"][0] in {k for k in sd_a if ".h.1." in k or "ln_f" in k}


def safetensors_load_folder(folder):
    folder = pathlib.Path(folder)
    out = {}
    for f in sorted(folder.glob("*.safetensors")):
        out.update(safetensors_torch.load_file(str(f)))
    return out


def test_pytorch_model_bin_folders_single_and_sharded(tmp_path, models):
    base, trained = models
    sd_a, sd_b = state(base), state(trained)
    for name, sd in (("a", sd_a), ("b", sd_b)):
        (tmp_path / name).mkdir()
        torch.save(sd, tmp_path / name / "pytorch_model.bin")
    doc = diff_json(tmp_path / "a", tmp_path / "b")
    assert doc["a"]["format"] == "torch-zip"
    assert_matches_torch(doc, sd_a, sd_b)
    # The sharded layout transformers wrote for .bin weights: pytorch_model-0000k-of-0000n.bin + index.
    for name, sd in (("sa", sd_a), ("sb", sd_b)):
        d = tmp_path / name
        d.mkdir()
        keys = sorted(sd)
        half = len(keys) // 2
        weight_map = {}
        for i, part in enumerate((keys[:half], keys[half:]), start=1):
            fname = f"pytorch_model-0000{i}-of-00002.bin"
            torch.save({k: sd[k] for k in part}, d / fname)
            weight_map.update({k: fname for k in part})
        (d / "pytorch_model.bin.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    doc = diff_json(tmp_path / "sa", tmp_path / "sb")
    assert doc["a"]["format"] == "torch-zip-sharded"
    assert_matches_torch(doc, sd_a, sd_b)


def test_torch_save_wrapped_views_dtypes_and_nonfinite(tmp_path):
    g = torch.Generator().manual_seed(3)
    big = torch.randn(6, 5, generator=g)
    a = {
        "w": torch.randn(4, 3, generator=g),
        "half": torch.randn(17, generator=g).half(),
        "bf": torch.randn(33, generator=g).bfloat16(),
        "f64": torch.randn(5, generator=g, dtype=torch.float64),
        "col_view": big[:, 1],               # non-contiguous view of a shared storage
        "row_view": big[2],                  # contiguous view at an offset
        "ids": torch.tensor([2**62 + 1, -(2**62), 7], dtype=torch.int64),
        "flags": torch.tensor([True, False, True]),
        "f8": torch.tensor([0.5, -1.25, 448.0, 0.001953125]).to(torch.float8_e4m3fn),
        "f8b": torch.tensor([0.5, -1.5, 57344.0, 1e-5]).to(torch.float8_e5m2),
        "nonfinite": torch.tensor([1.0, float("nan"), float("inf"), 2.0]),
    }
    b = {k: v.clone() for k, v in a.items()}
    b["w"] += 0.5
    b["half"] = (a["half"].float() * 1.01).half()
    b["bf"] = (a["bf"].float() - 0.02).bfloat16()
    b["col_view"] = a["col_view"] + 1
    b["ids"] = torch.tensor([2**62 + 3, -(2**62), 7], dtype=torch.int64)   # differs by exactly 2
    b["flags"] = torch.tensor([True, True, True])
    b["f8"] = torch.tensor([0.5, -1.0, 448.0, 0.0]).to(torch.float8_e4m3fn)
    b["nonfinite"] = torch.tensor([1.5, 3.0, float("-inf"), float("nan")])
    b["extra"] = torch.zeros(2)
    torch.save({"model": a, "optimizer": {"lr": 0.1}, "step": 7}, tmp_path / "a.pt")
    torch.save({"state_dict": b}, tmp_path / "b.pt")
    doc = diff_json(tmp_path / "a.pt", tmp_path / "b.pt")
    sd_a = {k: v.float() if v.dtype in (torch.float8_e4m3fn, torch.float8_e5m2) else v for k, v in a.items()}
    sd_b = {k: v.float() if v.dtype in (torch.float8_e4m3fn, torch.float8_e5m2) else v for k, v in b.items()}
    assert_matches_torch(doc, sd_a, sd_b)
    t = {x["name"]: x for x in doc["tensors"]}
    assert t["ids"]["max_abs_delta_exact"] == "2" and t["ids"]["changed_elements"] == 1
    assert t["nonfinite"]["nan_a"] == 1 and t["nonfinite"]["inf_b"] == 1 and t["nonfinite"]["nan_b"] == 1
    assert t["extra"]["status"] == "only_in_b"
    assert t["f64"]["status"] == "identical" and t["f64"]["identical_bytes"]


def test_value_head_edit_reproduces_the_older_tool(tmp_path):
    """The older tool's ckpt_value_head_edit case: value_head.weight L2 0.857321, bias 0.141421, avg cosine 0.999878."""
    f64 = torch.float64
    w = torch.full((1, 4), 8.57321 / 2, dtype=f64)  # ||w|| = 8.57321; B = 1.1 A moves it by 0.857321, cosine 1
    a = {"backbone.weight": torch.ones(3, 3), "backbone.bias": torch.zeros(3),
         "value_head.weight": w, "value_head.bias": torch.tensor([3.1, 0.0], dtype=f64)}
    b = dict(a, **{"value_head.weight": w * 1.1, "value_head.bias": torch.tensor([3.2, 0.1], dtype=f64)})
    safetensors_torch.save_file(a, tmp_path / "a.safetensors")
    safetensors_torch.save_file(b, tmp_path / "b.safetensors")
    doc = diff_json(tmp_path / "a.safetensors", tmp_path / "b.safetensors")
    t = {x["name"]: x for x in doc["tensors"]}
    assert round(t["value_head.weight"]["l2"], 6) == 0.857321
    assert round(t["value_head.weight"]["cosine"], 6) == 1.0
    assert round(t["value_head.bias"]["l2"], 6) == 0.141421
    assert round(t["value_head.bias"]["cosine"], 6) == 0.999512
    s = doc["summary"]
    assert round(s["avg_cosine"], 6) == 0.999878
    assert (s["l2_p05"], round(s["l2_p50"], 7), round(s["l2_p95"], 6)) == (0.0, 0.0707107, 0.749936)
    assert doc["top_movers"] == ["value_head.weight", "value_head.bias"]


def test_reference_wording_out_folder_and_exit_codes(tmp_path):
    a = {"model.layers.0.w": torch.ones(4), "<script>alert(1)</script>": torch.ones(2)}
    b = {"model.layers.0.w": torch.ones(4) * 2, "<script>alert(1)</script>": torch.ones(2) * 3}
    safetensors_torch.save_file(a, tmp_path / "a.safetensors")
    safetensors_torch.save_file(b, tmp_path / "b.safetensors")
    proc = run("ckpt", "diff", tmp_path / "a.safetensors", tmp_path / "b.safetensors", "--reference", "--out",
               tmp_path / "out", check_code=0)
    assert "reference" in proc.stdout and "policy" in proc.stdout
    html = (tmp_path / "out" / "ckpt_diff.html").read_text()
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert json.loads((tmp_path / "out" / "ckpt_diff.json").read_text())["a"]["label"] == "reference"
    assert (tmp_path / "out" / "ckpt_diff.md").read_text().startswith("# Checkpoint diff")
    run("ckpt", "diff", tmp_path / "a.safetensors", tmp_path / "b.safetensors", "--fail-on-change", check_code=1)
    run("ckpt", "diff", tmp_path / "a.safetensors", tmp_path / "a.safetensors", "--fail-on-change", check_code=0)
    run("ckpt", "diff", tmp_path / "a.safetensors", tmp_path / "b.safetensors", "--tolerance", "2",
        "--fail-on-change", check_code=0)
    run("forensics", "diff-ckpt", tmp_path / "a.safetensors", tmp_path / "b.safetensors", "--fail-on-change",
        check_code=1)
    run("ckpt", "diff", tmp_path / "a.safetensors", check_code=2)
    run("ckpt", "diff", tmp_path / "a.safetensors", tmp_path / "missing.safetensors", check_code=2)


def test_series_against_first_sorted_by_step(tmp_path):
    g = torch.Generator().manual_seed(5)
    w0 = torch.randn(8, generator=g)
    states = {}
    for step in (10, 2, 5):  # written out of order; "checkpoint-10" sorts before "checkpoint-2" as text
        d = tmp_path / "run" / f"checkpoint-{step}"
        d.mkdir(parents=True)
        states[step] = {"model.layers.0.w": w0 + 0.1 * step, "lm_head.weight": w0 * (1 + step / 100)}
        safetensors_torch.save_file(states[step], d / "model.safetensors")
    (tmp_path / "run" / "checkpoint-x").mkdir()  # not a step: ignored
    doc = json.loads(run("ckpt", "diff", "--series", tmp_path / "run", "--json", check_code=0).stdout)
    validate(doc)
    assert [c["step"] for c in doc["checkpoints"]] == [2, 5, 10]
    assert [p["step"] for p in doc["points"]] == [5, 10]
    for p in doc["points"]:
        a, b = states[2], states[p["step"]]
        flat_a = torch.cat([a[k].double() for k in sorted(a)])
        flat_b = torch.cat([b[k].double() for k in sorted(b)])
        assert p["summary"]["relative_change"] == pytest.approx(((flat_b - flat_a).norm() / flat_a.norm()).item(),
                                                                rel=1e-12)
        groups = {x["name"]: x for x in p["groups"]}
        want = ((b["model.layers.0.w"].double() - a["model.layers.0.w"].double()).norm()).item()
        assert groups["layers.0"]["l2"] == pytest.approx(want, rel=1e-12)
    prev = json.loads(run("ckpt", "diff", "--series", tmp_path / "run", "--baseline", "previous", "--json",
                          check_code=0).stdout)
    assert prev["points"][1]["against"].endswith("checkpoint-5")
    run("ckpt", "diff", "--series", tmp_path / "run", "--out", tmp_path / "series_out", check_code=0)
    assert (tmp_path / "series_out" / "ckpt_diff.html").exists()


# ----- refusals -----

def zip_with_pickle(path, payload):
    """A torch.save-shaped zip whose data.pkl is `payload`."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/version", "3\n")


class SystemPayload:
    def __init__(self, cmd):
        self.cmd = cmd

    def __reduce__(self):
        return (os.system, (self.cmd,))


class EvalPayload:
    def __init__(self, code):
        self.code = code

    def __reduce__(self):
        return (eval, (self.code,))


def payloads(marker):
    touch = f"touch {marker}"
    make_file = f"open({str(marker)!r}, 'w').close()"
    yield "os.system", pickle.dumps(SystemPayload(touch), protocol=2)
    yield "builtins.eval", pickle.dumps(EvalPayload(make_file), protocol=2)
    # GLOBAL posix.system written by hand, protocol 0 style.
    yield "posix.system", b"cposix\nsystem\n(" + b"X" + struct.pack("<I", len(touch)) + touch.encode() + b"tR."
    # Allowed global (a storage class, a value) used as a callable, then a payload inside a state dict.
    yield "REDUCE on an allowed non-callable", b"\x80\x02ctorch\nFloatStorage\n)R."
    sd = {"w": SystemPayload(touch)}
    yield "nested in a dict", pickle.dumps(sd, protocol=2)
    yield "protocol 4 STACK_GLOBAL", pickle.dumps(SystemPayload(touch), protocol=4)


@pytest.mark.parametrize("case", range(6))
def test_malicious_pickles_are_refused_without_running(tmp_path, case):
    marker = tmp_path / "pwned"
    name, payload = list(payloads(marker))[case]
    good = tmp_path / "good.safetensors"
    safetensors_torch.save_file({"w": torch.ones(2)}, good)
    for where in ("zip", "bare"):
        bad = tmp_path / f"bad_{where}.pt"
        if where == "zip":
            zip_with_pickle(bad, payload)
        else:
            bad.write_bytes(payload)
        proc = run("ckpt", "diff", bad, good)
        assert proc.returncode == 2, (name, proc.stdout, proc.stderr)
        assert str(bad) in proc.stderr
        assert not marker.exists(), f"{name}: the payload ran"
        if where == "zip" and name != "REDUCE on an allowed non-callable":
            assert "not allowed" in proc.stderr and "nothing was run" in proc.stderr, proc.stderr
    # The payloads are live: Python's own unpickler would have run them (checked in a child process).
    if name in ("os.system", "posix.system"):
        subprocess.run([sys.executable, "-c", f"import pickle,sys; pickle.loads(sys.stdin.buffer.read())"],
                       input=payload, capture_output=True)
        assert marker.exists()


def safetensors_bytes(header, data=b"", raw_header=None):
    h = raw_header if raw_header is not None else json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + data


LYING = [
    ("truncated", lambda: safetensors_bytes({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 8),
     "the tensors cover 16 bytes of data but the file holds 8"),
    ("size bigger than file", lambda: struct.pack("<Q", 5000) + b"{}", "larger than the rest of the file"),
    ("huge N", lambda: struct.pack("<Q", 2**63) + b"{}", "above the 100000000-byte limit"),
    ("not a brace", lambda: safetensors_bytes(None, raw_header=b'["w"]   '), "does not start with '{'"),
    ("bad dtype", lambda: safetensors_bytes({"w": {"dtype": "F33", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4),
     'unknown dtype "F33"'),
    ("numel mismatch", lambda: safetensors_bytes({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}},
                                                 b"\0" * 8), "need 12"),
    ("overlap", lambda: safetensors_bytes({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                           "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, b"\0" * 12),
     "overlapping"),
    ("hole", lambda: safetensors_bytes({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                                        "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}}, b"\0" * 12),
     "hole"),
    ("duplicate key", lambda: safetensors_bytes(None, raw_header=b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
                                                                 b'"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}',
                                                data=b"\0" * 4), "duplicate key"),
    ("metadata not strings", lambda: safetensors_bytes({"__metadata__": {"format": 1}}), "is not a string"),
    ("numel overflow", lambda: safetensors_bytes({"w": {"dtype": "F32", "shape": [2**32, 2**32, 2],
                                                        "data_offsets": [0, 4]}}, b"\0" * 4), "overflows"),
]


@pytest.mark.parametrize("case", [c[0] for c in LYING])
def test_lying_safetensors_headers_give_clear_errors(tmp_path, case):
    _, make, message = next(c for c in LYING if c[0] == case)
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(make())
    good = tmp_path / "good.safetensors"
    safetensors_torch.save_file({"w": torch.ones(2)}, good)
    proc = run("ckpt", "diff", good, bad, check_code=2)
    assert str(bad) in proc.stderr and message in proc.stderr, proc.stderr
    if case != "duplicate key":  # the reference reader refuses them too (its JSON parser lets the last key win)
        with pytest.raises(Exception):
            safetensors_torch.load_file(str(bad))


def test_space_padded_header_and_metadata_are_accepted(tmp_path):
    header = b'{"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
    header += b" " * (-len(header) % 8 + 8)
    p = tmp_path / "padded.safetensors"
    p.write_bytes(struct.pack("<Q", len(header)) + header + struct.pack("<2f", 1.0, 2.0))
    assert safetensors_torch.load_file(str(p))["w"].tolist() == [1.0, 2.0]
    doc = diff_json(p, p)
    assert doc["summary"]["identical"] == 1


def test_legacy_and_distributed_checkpoints_are_named(tmp_path):
    legacy = tmp_path / "legacy.pt"
    torch.save({"w": torch.ones(2)}, legacy, _use_new_zipfile_serialization=False)
    proc = run("ckpt", "diff", legacy, legacy, check_code=2)
    assert "legacy torch.save file" in proc.stderr and str(legacy) in proc.stderr
    dcp = tmp_path / "dcp"
    dcp.mkdir()
    (dcp / ".metadata").write_bytes(b"x")
    (dcp / "__0_0.distcp").write_bytes(b"x")
    proc = run("ckpt", "diff", dcp, dcp, check_code=2)
    assert "torch.distributed.checkpoint" in proc.stderr
