"""`tf.keras.utils.Progbar`: a text progress bar with running averages of metrics."""

from __future__ import annotations

import sys
import time

import numpy as np

__all__ = ["Progbar"]


class Progbar:
    """Displays progress towards `target` steps (None: unknown) with averaged values.

    Args:
        target: total number of steps, or None.
        width: the bar's width in characters.
        verbose: 1 (bar, redrawn), 2 (one line at the end), 0 (silent).
        interval: minimum seconds between redraws.
        stateful_metrics: names whose values are shown as given, not averaged.
        unit_name: the word after the per-step time ('step', 'sample').
    """

    def __init__(self, target, width=30, verbose=1, interval=0.05, stateful_metrics=None,
                 unit_name="step"):
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        self.stateful_metrics = set(stateful_metrics or ())
        self._dynamic_display = (hasattr(sys.stdout, "isatty") and sys.stdout.isatty()) \
            or "ipykernel" in sys.modules
        self._total_width = 0
        self._seen_so_far = 0
        self._values = {}
        self._values_order = []
        self._start = time.time()
        self._last_update = 0.0

    def update(self, current, values=None):
        """Moves to step `current`, folding `values` ([(name, value), ...]) into the averages
        (weighted by the steps since the last update)."""
        for name, value in values or []:
            if name not in self._values_order:
                self._values_order.append(name)
            if name in self.stateful_metrics:
                self._values[name] = value
                continue
            steps = max(1, current - self._seen_so_far)
            if name not in self._values:
                self._values[name] = [value * steps, steps]
            else:
                self._values[name][0] += value * steps
                self._values[name][1] += steps
        self._seen_so_far = current
        now = time.time()
        done = self.target is not None and current >= self.target
        if self.verbose == 1:
            if now - self._last_update < self.interval and not done:
                return
            self._write_bar(current, now, done)
        elif self.verbose == 2 and done:
            sys.stdout.write(f"{self._timing(current, now, done)}{self._metrics()}\n")
            sys.stdout.flush()
        self._last_update = now

    def add(self, n, values=None):
        """`update(seen + n, values)`."""
        self.update(self._seen_so_far + n, values)

    def _metrics(self):
        info = ""
        for name in self._values_order:
            info += f" - {name}:"
            value = self._values[name]
            if isinstance(value, list):
                avg = np.mean(value[0] / max(1, value[1]))
                info += f" {avg:.4f}" if abs(avg) > 1e-3 else f" {avg:.4e}"
            else:
                info += f" {value}"
        return info

    def _timing(self, current, now, done):
        elapsed = now - self._start
        per_unit = elapsed / current if current else 0.0
        if self.target is not None and not done:
            eta = per_unit * (self.target - current)
            if eta > 3600:
                eta_text = f"{int(eta // 3600)}:{int(eta % 3600) // 60:02d}:{int(eta % 60):02d}"
            elif eta > 60:
                eta_text = f"{int(eta // 60)}:{int(eta % 60):02d}"
            else:
                eta_text = f"{int(eta)}s"
            return f" - ETA: {eta_text}"
        if per_unit >= 1 or per_unit == 0:
            unit = f"{per_unit:.0f}s/{self.unit_name}"
        elif per_unit >= 1e-3:
            unit = f"{per_unit * 1e3:.0f}ms/{self.unit_name}"
        else:
            unit = f"{per_unit * 1e6:.0f}us/{self.unit_name}"
        return f" - {elapsed:.0f}s {unit}"

    def _write_bar(self, current, now, done):
        previous = self._total_width
        if self._dynamic_display:
            sys.stdout.write("\b" * previous + "\r")
        else:
            sys.stdout.write("\n")
        if self.target is not None:
            digits = int(np.log10(self.target)) + 1 if self.target > 0 else 1
            bar = f"{current:{digits}d}/{self.target} ["
            filled = int(self.width * (current / self.target)) if self.target else self.width
            if filled > 0:
                bar += "=" * (filled - 1) + (">" if current < self.target else "=")
            bar += "." * (self.width - filled) + "]"
        else:
            bar = f"{current:7d}/Unknown"
        line = bar + self._timing(current, now, done) + self._metrics()
        self._total_width = len(line)
        if previous > len(line):
            line += " " * (previous - len(line))
        if done:
            line += "\n"
        sys.stdout.write(line)
        sys.stdout.flush()
