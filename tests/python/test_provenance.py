"""Content hashes, lineage and run manifest diff: checked against xxHash's own Python binding, and end to end through
the installed `rldk lineage` / `rldk track diff` commands."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest
import xxhash

import rldk.lineage as lineage
from rldk import provenance
from rldk.errors import SourceNotFoundError, UnrecognizedFormatError


def rldk_cmd(*args, cwd=None):
    return subprocess.run(["rldk", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def oracle(data: bytes) -> str:
    return "xxh3-128:" + xxhash.xxh3_128_hexdigest(data)


# ---- hashes ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("size", [0, 1, 16, 17, 128, 129, 240, 241, 1024, 4 << 20, (4 << 20) + 7, 9_000_001])
def test_file_hash_matches_xxhash_at_every_size_boundary(tmp_path, size):
    # Sizes around XXH3's internal block boundaries and the reader's 4 MiB chunk.
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    [digest] = provenance.hash_files([path])
    assert digest == {"path": str(path), "bytes": size, "hash": oracle(data)}
    assert provenance.hash_bytes(data) == oracle(data)


def test_streaming_hasher_equals_one_shot_for_any_split():
    data = np.random.default_rng(0).standard_normal(250_000)
    whole = provenance.hash_bytes(data)
    assert whole == oracle(data.tobytes())
    raw = data.tobytes()
    for cut in (0, 1, 63, 64, 4095, len(raw) // 2, len(raw) - 1, len(raw)):
        h = provenance.Hasher()
        h.update(raw[:cut])
        h.update(memoryview(raw)[cut:])
        assert h.digest() == whole and h.bytes == len(raw)
    h = provenance.Hasher()
    h.update_text("héllo")
    assert h.hexdigest() == xxhash.xxh3_128_hexdigest("héllo".encode())


def test_non_contiguous_buffers_are_refused_not_copied():
    with pytest.raises((ValueError, BufferError)):
        provenance.hash_bytes(np.arange(100)[::2])


def test_parallel_file_hashes_are_in_the_order_given(tmp_path):
    paths = []
    for i in range(40):
        p = tmp_path / f"shard-{39 - i:02d}.bin"
        p.write_bytes(os.urandom(1000 + i))
        paths.append(p)
    got = provenance.hash_files(paths, threads=4)
    assert [g["path"] for g in got] == [str(p) for p in paths]
    assert [g["hash"] for g in got] == [oracle(p.read_bytes()) for p in paths]


def test_unreadable_and_missing_files_are_named(tmp_path):
    with pytest.raises(SourceNotFoundError, match="nope.bin"):
        provenance.hash_files([tmp_path / "nope.bin"])
    secret = tmp_path / "secret.bin"
    secret.write_bytes(b"x")
    secret.chmod(0)
    if os.geteuid() != 0:  # root reads anything
        with pytest.raises(Exception, match="secret.bin"):
            provenance.hash_files([secret])


def test_tree_root_is_the_documented_hash_list(tmp_path):
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "b.txt").write_text("b")
    (tmp_path / "d" / "sub" / "a.txt").write_text("aa")
    (tmp_path / "d" / "empty.txt").write_text("")
    tree = provenance.hash_tree([tmp_path / "d"], root=tmp_path)
    assert [f["path"] for f in tree["files"]] == ["d/b.txt", "d/empty.txt", "d/sub/a.txt"]
    lines = "".join(f'{f["hash"].split(":")[1]} {f["bytes"]} {f["path"]}\n' for f in tree["files"])
    assert tree["root"] == oracle(lines.encode())
    assert tree["bytes"] == 3


# ---- lineage ---------------------------------------------------------------------------------------------------------

@pytest.fixture
def sharded_project(tmp_path):
    raw = tmp_path / "data" / "raw"
    raw.mkdir(parents=True)
    for i in range(4):
        (raw / f"shard-{i:05d}.jsonl").write_text(
            "".join(json.dumps({"prompt": f"q{i}-{j}", "answer": j}) + "\n" for j in range(2000)))
    clean = tmp_path / "data" / "clean"
    clean.mkdir()
    (clean / "train.jsonl").write_text((raw / "shard-00000.jsonl").read_text())
    (tmp_path / "clean.py").write_text("print('dedup')\n")
    return tmp_path


def test_lineage_verify_names_a_changed_an_added_and_a_removed_shard(sharded_project):
    root = sharded_project
    manifest = root / "lineage.json"
    assert rldk_cmd("lineage", "record", "data/raw", "-o", manifest, cwd=root).returncode == 0
    r = rldk_cmd("lineage", "record", "data/clean", "--name", "clean", "--from", "raw", "--cmd",
                 "python clean.py --dedup", "--script", "clean.py", "-o", manifest, cwd=root)
    assert r.returncode == 0, r.stderr
    ok = rldk_cmd("lineage", "verify", manifest, cwd=root)
    assert ok.returncode == 0 and "lineage ok: 5 files in 2 datasets" in ok.stdout

    # One byte in the middle of one shard, one shard added, one removed.
    shard = root / "data" / "raw" / "shard-00002.jsonl"
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0x01
    shard.write_bytes(bytes(data))
    (root / "data" / "raw" / "shard-00004.jsonl").write_text("{}\n")
    (root / "data" / "raw" / "shard-00001.jsonl").unlink()

    # Verified from another working folder: paths in the manifest are relative to the manifest.
    r = rldk_cmd("lineage", "verify", manifest, "--json", cwd="/")
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    assert report["schema"] == "rldk.lineage-verify/v1" and not report["ok"]
    changes = {(c["path"], c["change"]) for c in report["changes"]}
    assert changes == {("data/raw/shard-00002.jsonl", "changed"), ("data/raw/shard-00004.jsonl", "added"),
                       ("data/raw/shard-00001.jsonl", "removed")}
    text = rldk_cmd("lineage", "verify", manifest, cwd=root).stdout
    assert "1 changed, 1 added, 1 removed" in text and "shard-00002.jsonl" in text

    # The transform's script is checked too.
    (root / "clean.py").write_text("print('dedup v2')\n")
    report = lineage.verify(manifest)
    assert report["scripts_changed"] == ["make clean: clean.py changed"]


def test_lineage_graph_is_shown_as_text_mermaid_dot_and_svg(sharded_project, tmp_path):
    root = sharded_project
    manifest = root / "lineage.json"
    lineage.record(root / "data" / "raw", manifest=manifest)
    lineage.record(root / "data" / "clean", manifest=manifest, name="clean", inputs=["raw"],
                   command="python clean.py", script=root / "clean.py")
    written = json.loads(manifest.read_text())
    assert written["schema"] == "rldk.lineage/v1"
    assert written["transforms"] == [{"name": "make clean", "inputs": ["raw"], "outputs": ["clean"],
                                      "command": "python clean.py",
                                      "script": {"path": "clean.py", "hash": oracle(b"print('dedup')\n")}}]
    assert written["datasets"]["raw"]["paths"] == ["data/raw"] and len(written["datasets"]["raw"]["files"]) == 4

    text = rldk_cmd("lineage", "show", manifest).stdout
    assert "make clean: raw -> clean" in text
    mermaid = lineage.show(manifest, format="mermaid")
    assert mermaid.startswith("flowchart LR") and "--> t0" in mermaid and "t0 --> d" in mermaid
    dot = rldk_cmd("lineage", "show", manifest, "--format", "dot").stdout
    assert dot.startswith("digraph lineage") and "->" in dot
    page = tmp_path / "lineage.html"
    assert rldk_cmd("lineage", "show", manifest, "--html", page).returncode == 0
    html = page.read_text()
    assert "<svg" in html and "make clean" in html and "marker-end" in html


def test_hostile_dataset_names_stay_text(sharded_project, tmp_path):
    manifest = sharded_project / "lineage.json"
    evil = '<script>alert(1)</script>" onload="x'
    lineage.record(sharded_project / "data" / "raw", manifest=manifest, name=evil,
                   command='rm -rf / "; <img src=x>')
    page = lineage.html(manifest)
    assert "<script>alert" not in page and "<img" not in page
    assert "&lt;script&gt;" in page
    mermaid = lineage.show(manifest, format="mermaid")
    assert '"' not in mermaid.split("[", 1)[1].split("]")[0].strip('"')


def test_lineage_errors_are_clear(tmp_path):
    r = rldk_cmd("lineage", "record", tmp_path / "missing", "-o", tmp_path / "m.json")
    assert r.returncode == 2 and "missing" in r.stderr and "no such file" in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "something-else"}')
    r = rldk_cmd("lineage", "verify", bad)
    assert r.returncode == 2 and "not an rldk lineage manifest" in r.stderr
    bad.write_text('{"schema": "rldk.lineage/v1", "datasets": {"x": {"files": [{"bytes": 1}]}}}')
    r = rldk_cmd("lineage", "verify", bad)
    assert r.returncode == 2 and "no path or hash" in r.stderr
    bad.write_text('{"schema": "rldk.lin')
    with pytest.raises(UnrecognizedFormatError, match="not valid JSON"):
        lineage.verify(bad)


# ---- run manifest diff (the manifests here are written by hand; test_tracking.py writes them with a real run) ----

def manifest(**overrides):
    m = {
        "schema": "rldk.run-manifest/v1", "experiment_name": "exp", "experiment_id": "id-1", "status": "finished",
        "started_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T01:00:00Z", "timings": {"duration_s": 3600},
        "environment": {"python": {"version": "3.11.2"}, "packages": {"torch": "2.13.0", "trl": "1.16.0"},
                        "env_vars": {"PYTHONHASHSEED": "0"}},
        "git": {"available": True, "commit": "abc", "branch": "main", "dirty": True,
                "patch": "diff --git a/train.py b/train.py\n--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-lr = 1e-5\n"
                         "+lr = 1e-4\n",
                "untracked": ["notes.txt"]},
        "seeds": {"seed": 42, "torch": 42},
        "config": {"learning_rate": 1e-5, "per_device_train_batch_size": 8},
        "datasets": {"train": {"kind": "files", "hash": "xxh3-128:aa", "bytes": 10,
                               "files": [{"path": "a.jsonl", "bytes": 5, "hash": "xxh3-128:01"},
                                         {"path": "b.jsonl", "bytes": 5, "hash": "xxh3-128:02"}]}},
        "models": {"policy": {"architecture_hash": "xxh3-128:77", "weights_hash": "xxh3-128:88",
                              "tensors": [{"name": "w", "shape": [2, 2], "dtype": "float32", "hash": "xxh3-128:09"}]}},
    }
    for path, value in overrides.items():
        node = m
        keys = path.split("__")
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value
    return m


def write_manifest(folder, m):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rldk_manifest.json").write_text(json.dumps(m))
    return folder


def diff(tmp_path, a, b):
    r = rldk_cmd("track", "diff", write_manifest(tmp_path / "a", a), write_manifest(tmp_path / "b", b), "--json")
    assert r.returncode in (0, 1), r.stderr
    out = json.loads(r.stdout)
    assert out["schema"] == "rldk.track-diff/v1" and out["identical"] == (r.returncode == 0)
    return out["changes"]


def test_identical_manifests_differ_only_in_identity_and_time(tmp_path):
    b = manifest(experiment_id="id-2", started_at="2027-01-01", finished_at=None, timings={"duration_s": 1})
    assert diff(tmp_path, manifest(), b) == []


def test_each_kind_of_change_is_one_change(tmp_path):
    files = [{"path": "a.jsonl", "bytes": 5, "hash": "xxh3-128:01"}, {"path": "b.jsonl", "bytes": 5, "hash": "xxh3-128:FF"}]
    [c] = diff(tmp_path, manifest(), manifest(datasets__train__files=files, datasets__train__hash="xxh3-128:bb"))
    assert (c["section"], c["key"], c["a"], c["b"]) == ("datasets", "train", '"xxh3-128:aa"', '"xxh3-128:bb"')
    assert "files[b.jsonl] differs" in c["detail"] and not any("a.jsonl" in d for d in c["detail"])

    [c] = diff(tmp_path, manifest(), manifest(environment__packages={"torch": "2.13.1", "trl": "1.16.0"}))
    assert (c["section"], c["key"], c["a"], c["b"]) == ("packages", "torch", '"2.13.0"', '"2.13.1"')

    patch = manifest()["git"]["patch"].replace("+lr = 1e-4", "+lr = 3e-4")
    [c] = diff(tmp_path, manifest(), manifest(git__patch=patch))
    assert (c["section"], c["key"]) == ("git", "patch")
    assert c["detail"] == ["only in A's uncommitted changes: train.py: +lr = 1e-4",
                           "only in B's uncommitted changes: train.py: +lr = 3e-4"]

    [c] = diff(tmp_path, manifest(), manifest(git__untracked=["notes.txt", "scratch.py"]))
    assert (c["section"], c["key"], c["a"], c["b"]) == ("git", "untracked[scratch.py]", None, "present")

    changes = diff(tmp_path, manifest(), manifest(config={"learning_rate": 3e-5, "per_device_train_batch_size": 8},
                                                  seeds={"seed": 7, "torch": 7}))
    assert [(c["section"], c["key"]) for c in changes] == [("config", "learning_rate"), ("seeds", "seed"),
                                                          ("seeds", "torch")]

    tensors = [{"name": "w", "shape": [2, 2], "dtype": "float32", "hash": "xxh3-128:10"}]
    [c] = diff(tmp_path, manifest(), manifest(models__policy__tensors=tensors, models__policy__weights_hash="x"))
    assert c["section"] == "models" and "tensors[w] differs" in c["detail"]

    # A model named like a hub id keeps its whole name.
    hub = {"Qwen/Qwen2-0.5B": manifest()["models"]["policy"]}
    moved = {"Qwen/Qwen2-0.5B": dict(hub["Qwen/Qwen2-0.5B"], weights_hash="xxh3-128:99")}
    [c] = diff(tmp_path, manifest(models=hub), manifest(models=moved))
    assert (c["key"], c["a"], c["b"]) == ("Qwen/Qwen2-0.5B", '"xxh3-128:88"', '"xxh3-128:99"')
    assert c["detail"] == ['weights_hash: "xxh3-128:88" -> "xxh3-128:99"']

    [c] = diff(tmp_path, manifest(), manifest(environment__env_vars={}))
    assert (c["section"], c["key"], c["b"]) == ("env_vars", "PYTHONHASHSEED", None)


def test_track_diff_text_markdown_and_errors(tmp_path):
    a = write_manifest(tmp_path / "a", manifest())
    b = write_manifest(tmp_path / "b", manifest(environment__packages={"torch": "2.13.0"}))
    md = tmp_path / "diff.md"
    r = rldk_cmd("track", "diff", a, b, "--md", md)
    assert r.returncode == 1 and "packages:" in r.stdout and "trl: \"1.16.0\" -> " not in r.stdout
    assert "trl: only in A" in r.stdout
    assert "| packages | `trl` |" in md.read_text()
    # A metrics file beside the manifest names its run.
    (a / "metrics.jsonl").write_text("{}\n")
    assert rldk_cmd("track", "diff", a / "metrics.jsonl", a).returncode == 0
    r = rldk_cmd("track", "diff", tmp_path / "nowhere", a)
    assert r.returncode == 2 and "nowhere" in r.stderr
    (tmp_path / "c").mkdir()
    r = rldk_cmd("track", "diff", tmp_path / "c", a)
    assert r.returncode == 2 and "rldk_manifest.json" in r.stderr
    (tmp_path / "c" / "rldk_manifest.json").write_text('{"schema": "rldk.lineage/v1"}')
    r = rldk_cmd("track", "diff", tmp_path / "c", a)
    assert r.returncode == 2 and "not an rldk run manifest" in r.stderr


def test_rldk_diff_compares_the_runs_manifests_when_both_have_one(tmp_path, examples):
    for side, log in (("a", "baseline.jsonl"), ("b", "lr_change.jsonl")):
        (tmp_path / side).mkdir()
        (tmp_path / side / log).write_bytes((examples / "diff" / log).read_bytes())
    a, b = tmp_path / "a" / "baseline.jsonl", tmp_path / "b" / "lr_change.jsonl"
    out = json.loads(rldk_cmd("diff", a, b, "--json").stdout)
    assert "provenance" not in out  # no manifests: nothing claimed

    write_manifest(tmp_path / "a", manifest())
    write_manifest(tmp_path / "b", manifest(config={"learning_rate": 1e-4, "per_device_train_batch_size": 8}))
    r = rldk_cmd("diff", a, b, "--json", "--out", tmp_path / "card")
    out = json.loads(r.stdout)
    assert out["provenance"]["identical"] is False
    assert [(c["section"], c["key"]) for c in out["provenance"]["changes"]] == [("config", "learning_rate")]
    html = (tmp_path / "card" / "diff.html").read_text()
    assert "What the runs were made of" in html and "learning_rate" in html
    assert "`learning_rate`" in (tmp_path / "card" / "diff.md").read_text()
    assert "config: learning_rate" in rldk_cmd("diff", a, b).stdout
