"""The reference suite's parts that can be judged without training: the code-fix sandbox, the gold rewards, the
catalog's consistency and the judging of catches. The suite itself runs end to end in scripts/test.sh."""
import subprocess
import time

import pytest

from conftest import rldk_binary
from rldk.reference import catalog, checks, sandbox, suite, tasks


def test_sandbox_scores_code_by_its_unit_tests():
    tests = tasks.unit_tests("sum")
    rates = sandbox.pass_rates([("return a + b", tests), ("return a - b", tests), ("return max ( a , b )", tests),
                                ("return (", tests)])
    assert rates[0] == 1.0 and rates[3] == 0.0
    assert 0.0 <= rates[1] < 1.0 and 0.0 <= rates[2] < 1.0


def test_sandbox_stops_loops_and_refuses_files_and_imports():
    tests = tasks.unit_tests("sum")
    start = time.time()
    rates = sandbox.pass_rates([("while True: pass", tests), ("return open('/etc/passwd').read()", tests),
                                ("return __import__('os').getpid()", tests), ("return a + b", tests)])
    assert rates == [0.0, 0.0, 0.0, 1.0]
    assert time.time() - start < 30


def test_summary_quality_does_not_pay_for_length():
    item = tasks.summarize_items(1, seed=5)[0]
    key = item["key"]
    assert tasks.summary_quality(" ".join(key), key, item["prompt"]) == pytest.approx(1.0)
    padded = " ".join(key + ["the", "a", "of", "in"])
    assert tasks.summary_quality(padded, key, item["prompt"]) < 0.5
    assert tasks.summary_quality("", key, item["prompt"]) == 0.0
    # The buggy reward models: one pays for the padding, the other squeezes everything towards 1.
    assert tasks.length_paying_rm(0.2, padded) > tasks.length_paying_rm(0.2, " ".join(key[:1]))
    assert tasks.saturating_rm(0.0, "x") > 0.98


def test_refusal_gold_and_held_out_eval():
    train = tasks.refusal_items(64, 1, tasks.THINGS_TRAIN)
    held_out = tasks.refusal_items(16, 2, tasks.THINGS_EVAL, phrasing="eval")
    assert not {i["prompt"] for i in train} & {i["prompt"] for i in held_out}
    harmful = next(i for i in train if i["harmful"])
    assert tasks.refusal_gold(harmful["chosen"], True) == 1.0 and tasks.refusal_gold(harmful["rejected"], True) == 0.0


def test_catalog_every_bug_has_a_catch_and_every_catch_is_checked():
    names = set()
    for run in catalog.RUNS:
        assert run.name not in names
        names.add(run.name)
        if run.bug is None:
            assert not run.expect
        else:
            assert run.expect, run.name
        for e in run.expect:
            assert e.check in run.checks, (run.name, e.check)
        assert catalog.healthy_of(run).bug is None
    quick = catalog.runs(full=False)
    assert any(r.bug for r in quick) and any(r.bug is None for r in quick)


def test_a_check_that_failed_is_never_a_quiet_healthy_run_or_a_catch():
    run = catalog.healthy_of(catalog.RUNS[1])
    broken = checks.Result("doctor", run.name, error="rldk scan printed no JSON report")
    rows = suite.judge(run, {"doctor": broken})
    assert rows and not rows[0]["ok"]
    lr100 = next(r for r in catalog.RUNS if r.variant == "lr100" and r.task == "summarize")
    ok, _ = suite.caught(lr100.expect[0], lr100, broken)
    assert not ok


def test_monitor_catch_needs_a_stop_by_the_named_step():
    lr100 = next(r for r in catalog.RUNS if r.variant == "lr100" and r.task == "summarize")
    expect = lr100.expect[0]
    late = checks.Result("monitor", lr100.name, hits=[checks.Hit("grpo_safe_kl_spike", 35, "stop at step 35, trainer stopped")])
    warned = checks.Result("monitor", lr100.name, hits=[checks.Hit("grpo_safe_kl_spike", 3, "warn at step 3")])
    on_time = checks.Result("monitor", lr100.name, hits=[checks.Hit("grpo_safe_kl_spike", 3, "stop at step 3, trainer stopped")])
    assert not suite.caught(expect, lr100, late)[0]
    assert not suite.caught(expect, lr100, warned)[0]
    assert suite.caught(expect, lr100, on_time) == (True, 3)


def test_evals_of_a_run_that_left_no_checkpoint_is_an_error_not_a_quiet_row(tmp_path):
    from rldk.reference import evaluate
    import sys

    ctx = checks.Context(str(tmp_path), "rldk", sys.executable, str(tmp_path / "no-model"), False, 40)
    suite.prepare_data(ctx.data)
    run = next(r for r in catalog.RUNS if r.name == "summarize-healthy")
    [(judged, result)] = evaluate.run_evals(ctx, [run])
    assert judged is run and result.error and not result.quiet
    assert not suite.judge(run, {"evals": result})[0]["ok"]


def test_run_help_lists_the_suites_own_options():
    # `rldk reference run` hands its words to the Python module; --help too, so the options shown are the suite's.
    proc = subprocess.run([rldk_binary(), "reference", "run", "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for option in ("--quick", "--full", "--out", "--model", "--jobs", "--only", "--docs"):
        assert option in proc.stdout, (option, proc.stdout)
