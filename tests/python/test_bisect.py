"""rldk bisect: in a small git repository made here, one commit makes the metric regress; bisect must name it,
skip commits whose command fails, refuse unsafe input, and always leave the repository as it found it."""
import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import rldk_binary


pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

# A toy trainer: its final accuracy is ACCURACY, logged for 20 steps to $RLDK_METRICS_PATH (or stdout).
TRAIN = """import json, os, sys
ACCURACY = {accuracy}
BROKEN = {broken}
if BROKEN:
    sys.exit("ImportError: this commit does not even start")
path = os.environ.get("RLDK_METRICS_PATH")
out = open(path, "w") if path else sys.stdout
for step in range(1, 21):
    out.write(json.dumps({{"step": step, "eval_accuracy": ACCURACY - 0.2 / step}}) + "\\n")
"""


def git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


def make_repo(path, accuracies, broken=()):
    """One commit per accuracy; returns the commit hashes in order."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "test@example.com")
    git(path, "config", "user.name", "test")
    shas = []
    for i, accuracy in enumerate(accuracies):
        (path / "train.py").write_text(TRAIN.format(accuracy=accuracy, broken=i in broken))
        (path / "notes.txt").write_text("commit %d\n" % i)
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", "change %d (accuracy %s)" % (i, accuracy))
        shas.append(git(path, "rev-parse", "HEAD"))
    return shas


def bisect(repo, *extra, cmd=None):
    args = [rldk_binary(), "bisect", "--repo", str(repo), "--cmd", cmd or "%s train.py" % sys.executable,
            "--metric", "eval_accuracy", "--cmp", "> 0.85", "--window", "5", "--json",
            "--log", str(repo.parent / "bisect.log"), *extra]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def assert_reset(repo, head):
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "main"
    assert not os.path.exists(repo / ".git" / "BISECT_LOG")
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""


def test_names_the_commit_that_introduced_the_regression(tmp_path):
    accuracies = [0.9, 0.91, 0.92, 0.9, 0.93, 0.7, 0.71, 0.69, 0.7]  # commit 5 regresses
    repo = tmp_path / "repo"
    shas = make_repo(repo, accuracies)
    proc = bisect(repo, "--good", shas[0], "--bad", "main")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["schema"] == "rldk.bisect/v1"
    assert result["found"] and result["first_bad_commit"] == shas[5]
    assert result["subject"] == "change 5 (accuracy 0.7)"
    assert 1 <= result["commits_tested"] <= 4  # log2(8) tests, not a linear scan
    log = (tmp_path / "bisect.log").read_text()
    assert "predicate " + shas[5][:12] + ": bad" in log and "satisfies > 0.85" in log
    assert_reset(repo, shas[-1])


def test_reads_console_output_when_no_metrics_file(tmp_path):
    repo = tmp_path / "repo"
    shas = make_repo(repo, [0.9, 0.9, 0.5, 0.5])
    # env -u: the trainer falls back to printing its JSON lines.
    proc = bisect(repo, "--good", shas[0], "--bad", shas[-1],
                  cmd="env -u RLDK_METRICS_PATH %s train.py" % sys.executable)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["first_bad_commit"] == shas[2]
    assert_reset(repo, shas[-1])


def test_commits_that_fail_are_skipped(tmp_path):
    repo = tmp_path / "repo"
    shas = make_repo(repo, [0.9, 0.9, 0.9, 0.9, 0.5, 0.5], broken={1, 2})
    proc = bisect(repo, "--good", shas[0], "--bad", shas[-1])
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["first_bad_commit"] == shas[4]
    assert "skip" in (tmp_path / "bisect.log").read_text()
    assert_reset(repo, shas[-1])


def test_ambiguous_when_only_skipped_commits_remain(tmp_path):
    repo = tmp_path / "repo"
    shas = make_repo(repo, [0.9, 0.5, 0.5], broken={1})
    proc = bisect(repo, "--good", shas[0], "--bad", shas[-1])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)
    assert not result["found"] and set(result["candidates"]) == {shas[1], shas[2]}
    assert_reset(repo, shas[-1])


def test_refuses_dirty_tree_unsafe_comparison_and_bad_revisions(tmp_path):
    repo = tmp_path / "repo"
    shas = make_repo(repo, [0.9, 0.5])
    (repo / "train.py").write_text("# edited\n")
    proc = bisect(repo, "--good", shas[0], "--bad", shas[1])
    assert proc.returncode == 2 and "uncommitted changes" in proc.stderr
    git(repo, "checkout", "--", "train.py")
    for cmp in ["> 0.8; touch pwned", "__import__('os')", "0.8", "> nan", ">"]:
        args = [rldk_binary(), "bisect", "--repo", str(repo), "--good", shas[0], "--bad", shas[1], "--cmd", "true",
                "--metric", "m", "--cmp", cmp]
        proc = subprocess.run(args, capture_output=True, text=True)
        assert proc.returncode == 2 and "--cmp" in proc.stderr, cmp
    assert not (repo / "pwned").exists()
    proc = bisect(repo, "--good", "no-such-rev", "--bad", shas[1])
    assert proc.returncode == 2 and "no-such-rev" in proc.stderr
    proc = bisect(repo, "--good", shas[1], "--bad", shas[0])
    assert proc.returncode == 2 and "not an ancestor" in proc.stderr
    assert_reset(repo, shas[-1])


def test_predicate_exit_codes(tmp_path):
    metrics = tmp_path / "m.jsonl"
    base = [rldk_binary(), "bisect", "--predicate", "--metric", "acc", "--window", "2", "--log", str(tmp_path / "l")]
    write = "%s -c \"import os; open(os.environ['RLDK_METRICS_PATH'],'w').write('{\\\"step\\\":1,\\\"acc\\\":%s}\\n')\""
    good = subprocess.run(base + ["--cmp", ">= 0.5", "--cmd", write % (sys.executable, "0.6")], cwd=tmp_path)
    bad = subprocess.run(base + ["--cmp", ">= 0.5", "--cmd", write % (sys.executable, "0.4")], cwd=tmp_path)
    skip = subprocess.run(base + ["--cmp", ">= 0.5", "--cmd", "exit 3"], cwd=tmp_path)
    missing = subprocess.run(base + ["--cmp", ">= 0.5", "--cmd", "echo nothing"], cwd=tmp_path)
    nan = subprocess.run(base + ["--cmp", "!= 0", "--cmd", write % (sys.executable, "NaN")], cwd=tmp_path)
    assert (good.returncode, bad.returncode, skip.returncode, missing.returncode, nan.returncode) == (0, 1, 125, 125, 1)
    assert not metrics.exists()
