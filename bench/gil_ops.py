"""Per-op wall time of small kernels while other Python threads keep the GIL busy (the
CIFAR-10 tutorial's preprocessing threads): the NumPy call each kernel makes (which releases
the GIL for its loop and must wait, up to the 5 ms switch interval, to get it back) against
a numba loop that keeps the GIL (`jit(nogil=False)`, the `jit.holds_gil` twins).

    PYTHONPATH=$PWD /opt/tfref/bin/python bench/gil_ops.py [--busy 2] [--calls 200]

Ops and shapes are the tutorial's: L2Loss of its weights (weight decay), the moving
averages' Sub / Mul / AssignSub on its variables (ExponentialMovingAverage), and its
small products (the softmax layer, [128, 192] x [192, 10]).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tensorflux.lib.numerics import jit as jit_mod  # noqa: E402


@jit_mod.jit(nogil=False)
def _sum_squares_held(x):
    total = x.dtype.type(0)
    for i in range(x.shape[0]):
        total += x[i] * x[i]
    return total


@jit_mod.jit(nogil=False)
def _moving_average_held(var, value, factor):
    for i in range(var.shape[0]):
        var[i] -= (var[i] - value[i]) * factor


def _busy(stop: threading.Event) -> None:
    n = 0
    while not stop.is_set():
        n += 1


def _time(fn, calls: int) -> list:
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--busy", type=int, default=2)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    f32 = np.float32
    cases = []
    for shape in ((2304, 384), (384, 192), (5, 5, 64, 64), (192, 10)):
        x = rng.standard_normal(shape).astype(f32)
        flat = x.reshape(-1)
        avg = x.copy()
        factor = f32(0.0001)
        cases.append((f"L2Loss {list(shape)}", lambda flat=flat: np.dot(flat, flat) / 2,
                      lambda flat=flat: _sum_squares_held(flat) / 2))

        def numpy_ema(avg=avg, x=x, factor=factor):
            delta = np.subtract(avg, x)  # Sub
            delta = np.multiply(delta, factor)  # Mul
            np.subtract(avg, delta, out=avg)  # AssignSub

        cases.append((f"EMA Sub/Mul/AssignSub {list(shape)}", numpy_ema,
                      lambda avg=avg, x=x, factor=factor: _moving_average_held(
                          avg.reshape(-1), x.reshape(-1), factor)))
    a = rng.standard_normal((128, 192)).astype(f32)
    b = rng.standard_normal((192, 10)).astype(f32)
    cases.append(("MatMul [128,192]x[192,10]", lambda: np.matmul(a, b), None))
    for _, numpy_fn, held_fn in cases:  # compile, warm up
        numpy_fn()
        if held_fn is not None:
            held_fn()
    stop = threading.Event()
    threads = [threading.Thread(target=_busy, args=(stop,), daemon=True)
               for _ in range(args.busy)]
    for t in threads:
        t.start()
    print(f"# load {os.getloadavg()}, {args.busy} busy Python threads, "
          f"switch interval {sys.getswitchinterval() * 1e3:.0f} ms")
    print(f"{'op':<36}{'numpy med us':>14}{'numpy max':>11}{'held med us':>13}{'held max':>10}")
    try:
        for name, numpy_fn, held_fn in cases:
            loose = _time(numpy_fn, args.calls)
            held = _time(held_fn, args.calls) if held_fn is not None else None
            row = f"{name:<36}{statistics.median(loose) * 1e6:>14.0f}{max(loose) * 1e6:>11.0f}"
            if held:
                row += f"{statistics.median(held) * 1e6:>13.0f}{max(held) * 1e6:>10.0f}"
            print(row)
    finally:
        stop.set()


if __name__ == "__main__":
    main()
