"""The lines `fit` and `evaluate` print, in Keras's (TF 1.x) layout for a non-interactive
stdout: "Train on N samples, validate on M samples", "Epoch i/n" when an epoch begins, and at
its end the finished progress bar (verbose=1) or the one-line summary (verbose=2)."""

from __future__ import annotations

__all__ = ["metrics_text", "epoch_line", "train_header"]

_BAR_WIDTH = 30


def metrics_text(logs) -> str:
    """" - name: value" for each metric; values under 1e-3 in magnitude in %.4e, as Keras."""
    parts = []
    for name, value in logs.items():
        value = float(value)
        parts.append(f" - {name}: {value:.4f}" if abs(value) > 1e-3 else
                     f" - {name}: {value:.4e}")
    return "".join(parts)


def epoch_line(count, elapsed, logs, verbose, unit="sample") -> str:
    """The end-of-pass line for `count` samples (or steps, `unit="step"`) that took `elapsed`
    seconds."""
    if verbose == 2:
        return f"{count}/{count} - {elapsed:.0f}s{metrics_text(logs)}\n"
    per = elapsed / max(count, 1)
    timing = (f"{per:.0f}s/{unit}" if per >= 1 else
              f"{per * 1e3:.0f}ms/{unit}" if per >= 1e-3 else f"{per * 1e6:.0f}us/{unit}")
    return (f"{count}/{count} [{'=' * _BAR_WIDTH}] - {elapsed:.0f}s {timing}"
            f"{metrics_text(logs)}\n")


def train_header(count, val_count) -> str:
    """The line `fit` prints before training when it validates."""
    return f"Train on {count} samples, validate on {val_count} samples\n"
