"""`rldk profile`: the memory leak test (linear vs plateau), step time and throughput from a log; and the monitor's
sys/* samples of a launched trainer's process tree catching a host-memory leak the trainer never logs."""
import json
import subprocess
import sys

from test_cli import rldk_binary


def write_log(path, memory):
    with open(path, "w") as f:
        for step in range(1, 301):
            f.write(json.dumps({"step": step, "perf/max_memory_allocated_gb": memory(step), "timing_s/step": 2.0,
                                "timing_s/gen": 1.2, "timing_s/update_actor": 0.6,
                                "perf/throughput": 1000.0 if not 200 <= step < 205 else 300.0}) + "\n")


def profile(path, *extra):
    proc = subprocess.run([rldk_binary(), "profile", "--run", str(path), "--json"] + list(extra),
                          capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_linear_memory_growth_is_a_leak_with_its_rate(tmp_path):
    log = tmp_path / "leak.jsonl"
    write_log(log, lambda step: 8.0 + 8.0 * (step - 1) / 299)
    code, doc = profile(log, "--memory-limit-gb", "24", "--gate")
    assert code == 1 and doc["leak"] is True
    (memory,) = doc["memory"]
    assert memory["shape"] == "linear" and memory["leak"] is True
    assert abs(memory["growth_gb_per_1k_steps"] - 8000.0 / 299) < 1e-6
    assert abs(memory["steps_to_limit"] - 8.0 / (8.0 / 299)) < 1e-3  # 8 GB left at 8/299 GB per step
    # The step-time breakdown and the throughput drop come from the same log.
    assert doc["time"]["mean_step_seconds"] == 2.0
    assert [p["metric"] for p in doc["time"]["parts"]] == ["timing_s/gen", "timing_s/update_actor"]
    assert [d["step"] for d in doc["throughput"]["drops"]] == [200]


def test_memory_that_plateaus_is_not_a_leak(tmp_path):
    log = tmp_path / "plateau.jsonl"
    write_log(log, lambda step: 8.0 + 8.0 * min(step, 60) / 60)
    code, doc = profile(log, "--gate")
    assert code == 0 and doc["leak"] is False
    assert doc["memory"][0]["shape"] == "plateau"


def test_profile_writes_the_card_and_names_bad_input(tmp_path):
    log = tmp_path / "leak.jsonl"
    write_log(log, lambda step: 8.0 + step / 10)
    out = tmp_path / "card"
    subprocess.run([rldk_binary(), "profile", str(log), "--out", str(out)], check=True, capture_output=True)
    html = (out / "profile.html").read_text()
    assert "<svg" in html and "LEAK" in html
    proc = subprocess.run([rldk_binary(), "profile", str(log), "--metrics", "disk"], capture_output=True, text=True)
    assert proc.returncode == 2 and "--metrics disk" in proc.stderr


LEAKY_TRAINER = """
import time
loaded = []
for _ in range(%d):  # start-up: importing libraries and loading a model raise memory before the first step
    loaded.append(b"m" * 10_000_000)
    time.sleep(0.01)
kept = []
for step in range(150):
    kept.append(b"x" * %d)  # a list that grows every step: the leak
    print({"loss": 1.0 / (step + 1), "step": step}, flush=True)
    time.sleep(0.02)
"""


def monitor_trainer(tmp_path, chunk_bytes, startup_chunks=0):
    script = tmp_path / "train.py"
    script.write_text(LEAKY_TRAINER % (startup_chunks, chunk_bytes))
    out = tmp_path / "out"
    # The preset's thresholds are sized for real trainers (a window of 20 samples adding 256 MiB and 10 %); this
    # trainer is small and quick, so the floor (50 MB over the window) and the grace period are lowered for the test.
    proc = subprocess.run(
        [rldk_binary(), "monitor", "--preset", "memory_leak", "--out", str(out), "--sys-interval", "0.05",
         "--set-rule", "memory_leak_host_rss.condition=slope(value) * (last(step) - first(step)) > 0.5 * first(value) and "
         "slope(value) * (last(step) - first(step)) > 50000000",
         "--set-rule", "memory_leak_host_rss.grace_steps=2", "--fail-on", "warn",
         "--cmd", "%s %s" % (sys.executable, script)],
        capture_output=True, text=True, timeout=120)
    alerts = [json.loads(l) for l in (out / "alerts.jsonl").read_text().splitlines() if l.strip()]
    samples = [json.loads(l) for l in (out / "sys.jsonl").read_text().splitlines() if l.strip()]
    return proc, alerts, samples


def test_monitor_cmd_catches_a_host_memory_leak_from_sampled_rss(tmp_path):
    proc, alerts, samples = monitor_trainer(tmp_path, 4_000_000)
    assert proc.returncode == 1, proc.stderr
    assert any(a["rule_id"] == "memory_leak_host_rss" and a["metric"] == "sys/rss" for a in alerts), alerts
    assert {s["name"] for s in samples} >= {"sys/rss", "sys/cpu_percent", "sys/open_files", "sys/processes"}
    # The trainer never logged memory: the samples are rldk's own.
    rss = [s["value"] for s in samples if s["name"] == "sys/rss"]
    assert min(rss) > 0 and max(rss) > rss[0] + 100_000_000


def test_monitor_cmd_is_quiet_when_memory_stays_flat(tmp_path):
    proc, alerts, samples = monitor_trainer(tmp_path, 0)
    assert proc.returncode == 0, proc.stderr
    assert not alerts
    assert any(s["name"] == "sys/rss" for s in samples)


def test_memory_climbing_before_the_first_logged_step_is_start_up_not_a_leak(tmp_path):
    # 400 MB loaded over about 4 s before the trainer logs anything, then flat: a model load, not a leak.
    proc, alerts, samples = monitor_trainer(tmp_path, 0, startup_chunks=40)
    assert proc.returncode == 0, (proc.stderr, alerts)
    assert not alerts
    rss = [s["value"] for s in samples if s["name"] == "sys/rss"]
    assert max(rss) > rss[0] + 300_000_000  # the climb was sampled and kept in sys.jsonl
