"""Detector-quality benchmark for `rldk scan`.

A generator of realistic synthetic PPO / GRPO / DPO runs with labeled, injected faults (`corpus`, `algorithms`,
`faults`), an evaluator that matches scan findings to labels (`evaluate`), and a runner (`run.py`) that scans a
generated corpus and writes the recall / precision / false-alarm / delay table. Method and numbers:
docs/detector-benchmark.md.
"""
