"""One synthetic run: a step axis, canonical metric columns, and the noise scale of every column.

Each column keeps its `sigma` (the standard deviation of its noise at every step): fault magnitudes are stated in
those units ("a 3-sigma level shift"), so an injector needs the scale of the noise it is competing with. NaN in a
column means "not logged at this step" (evals every N steps); a logged non-finite value is kept in `non_finite`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from .noise import ar1_student_t


@dataclass
class SyntheticRun:
    run_id: str
    algorithm: str
    steps: np.ndarray
    metrics: dict = field(default_factory=dict)  # name -> float array (NaN = not logged at this step)
    sigma: dict = field(default_factory=dict)  # name -> float array, noise std per step
    baseline: dict = field(default_factory=dict)  # name -> float array, the noise-free trend
    params: dict = field(default_factory=dict)  # generator parameters an injector may need (KL target, caps, ...)
    non_finite: dict = field(default_factory=dict)  # name -> {step index: "nan" | "inf" | "-inf"}

    @property
    def n(self) -> int:
        return int(self.steps.size)

    def add(self, rng: np.random.Generator, name: str, trend: np.ndarray, scale, *, phi: float, df: float,
            relative: bool = False, lo: float | None = None, hi: float | None = None) -> np.ndarray:
        """Adds trend + AR(1) Student-t noise. `relative` noise is multiplicative (log-normal-like: grad norms, KL,
        losses are positive and their spread grows with their level); `scale` is then a fraction of the level."""
        trend = np.broadcast_to(np.asarray(trend, dtype=float), (self.n,)).copy()
        z = ar1_student_t(rng, self.n, phi, df)
        if relative:
            values = trend * np.exp(scale * z - 0.5 * scale * scale)
            sigma = np.abs(trend) * scale
        else:
            sigma = np.broadcast_to(np.asarray(scale, dtype=float), (self.n,)).copy()
            values = trend + sigma * z
        if lo is not None or hi is not None:
            values = np.clip(values, lo, hi)
        self.metrics[name] = values
        self.sigma[name] = sigma
        self.baseline[name] = trend
        return values

    def set_exact(self, name: str, values: np.ndarray) -> None:
        """A noise-free column (learning rate, epoch counter, a KL coefficient set by a controller)."""
        values = np.asarray(values, dtype=float)
        self.metrics[name] = values
        self.baseline[name] = values.copy()
        # An exact column has no noise; a floor keeps "k sigma" well defined for injectors.
        self.sigma[name] = np.maximum(np.abs(values) * 1e-3, 1e-12)

    def subsample(self, every: int) -> "SyntheticRun":
        """The run as a trainer that logs every `every` optimizer steps writes it: the rows of steps every, 2 every,
        ... with the values of that step (HF Trainer logs grad_norm and the learning rate this way; verl and OpenRLHF
        log each step's batch statistics). Noise, trends and faults are generated per optimizer step, so a fault
        lasting a few steps between two logging steps is not in the log, as in a real one."""
        if every == 1:
            return self
        keep = np.arange(every - 1, self.n, every)
        where = {int(i): k for k, i in enumerate(keep)}
        return SyntheticRun(
            run_id=self.run_id, algorithm=self.algorithm, steps=self.steps[keep],
            metrics={k: v[keep] for k, v in self.metrics.items()}, sigma={k: v[keep] for k, v in self.sigma.items()},
            baseline={k: v[keep] for k, v in self.baseline.items()}, params=dict(self.params),
            non_finite={name: {where[i]: kind for i, kind in cells.items() if i in where}
                        for name, cells in self.non_finite.items()})

    def _special_row(self, i, names, row):
        parts = ['"step": %d' % row[0]]
        for name, value in zip(names, row[1:]):
            bad = self.non_finite.get(name, {}).get(i)
            if bad is not None:
                parts.append('"%s": %s' % (name, _JSON_NON_FINITE[bad]))
            elif value == value:  # NaN: not logged at this step
                parts.append('"%s": %.7g' % (name, value))
        return "{" + ", ".join(parts) + "}\n"

    def write_jsonl(self, path: str) -> int:
        """Writes one wide JSON object per step (the shape TRL and verl loggers write). Returns the byte count.
        Rows with every metric finite and logged take one %-format call; the rest are assembled cell by cell."""
        names = sorted(self.metrics)
        table = np.column_stack([self.steps.astype(float)] + [self.metrics[name] for name in names])
        logged = ~np.isnan(table)
        special = np.zeros(self.n, dtype=bool)
        for cells in self.non_finite.values():
            special[list(cells)] = True
        formats = {}  # which columns a row has (evals log only every N steps) -> one %-format for such rows
        lines = []
        for i, row in enumerate(table.tolist()):
            if special[i]:
                lines.append(self._special_row(i, names, row))
                continue
            key = logged[i].tobytes()
            fmt = formats.get(key)
            if fmt is None:
                fmt = formats[key] = _row_format([n for n, ok in zip(names, logged[i][1:]) if ok])
            lines.append(fmt % tuple(v for v in row if v == v))
        text = "".join(lines)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return len(text)


def _row_format(names):
    # Seven significant digits, what loggers keep after float32 rounding; always a valid JSON number.
    return "{" + ", ".join(['"step": %d'] + ['"%s": %%.7g' % name for name in names]) + "}\n"


# How Python's json module (and so most trainers) writes non-finite floats; rldk's JSONL reader accepts them.
_JSON_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
