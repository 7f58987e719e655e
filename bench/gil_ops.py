"""Per-op wall time of small kernels while other Python threads keep the GIL busy (the
CIFAR-10 tutorial's preprocessing threads): the NumPy call each kernel makes (which releases
the GIL for its loop and must wait, up to the 5 ms switch interval, to get it back) against
a numba loop that keeps the GIL (`jit(nogil=False)`, the `jit.holds_gil` twins).

    PYTHONPATH=$PWD /opt/tfref/bin/python bench/gil_ops.py [--busy 2] [--calls 200]

`--session` times the tutorial's `ExponentialMovingAverage.apply` step over its ten
variables instead, with runtime/moving_averages.py's fusion on and off (two sessions,
interleaved call by call).

Ops and shapes are the tutorial's: L2Loss of its weights (weight decay), the moving
averages' Sub / Mul / AssignSub on its variables (ExponentialMovingAverage), and its
small products (the softmax layer, [128, 192] x [192, 10]).
"""

from __future__ import annotations

import argparse
import functools
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


CIFAR_SHAPES = [(5, 5, 3, 64), (64,), (5, 5, 64, 64), (64,), (2304, 384), (384,), (384, 192),
                (192,), (192, 10), (10,)]


def _ema_sessions():
    import tensorflux as tf
    from tensorflux.runtime import moving_averages

    runs = {}
    for name, fuse in (("unfused", False), ("fused", True)):
        moving_averages.FUSE_MOVING_AVERAGES = fuse
        graph = tf.Graph()
        with graph.as_default():
            step = tf.train.get_or_create_global_step()
            variables = [tf.Variable(tf.random_normal(shape)) for shape in CIFAR_SHAPES]
            ema = tf.train.ExponentialMovingAverage(0.9999, step)
            update = ema.apply(variables)
            init = tf.global_variables_initializer()
        sess = tf.Session(graph=graph)
        sess.run(init)
        sess.run(update)  # the plan is built here
        runs[name] = functools.partial(sess.run, update)
    moving_averages.FUSE_MOVING_AVERAGES = True
    return runs


def session_main(args) -> None:
    runs = _ema_sessions()
    stop = threading.Event()
    for _ in range(args.busy):
        threading.Thread(target=_busy, args=(stop,), daemon=True).start()
    times: dict = {name: [] for name in runs}
    cpu: dict = {name: [] for name in runs}
    print(f"# load {os.getloadavg()}, {args.busy} busy Python threads")
    try:
        for _ in range(args.calls):
            for name, run in runs.items():
                c0, t0 = time.thread_time(), time.perf_counter()
                run()
                times[name].append(time.perf_counter() - t0)
                cpu[name].append(time.thread_time() - c0)
    finally:
        stop.set()
    print(f"{'EMA step (10 variables)':<26}{'wall med us':>12}{'wall p90':>10}{'thread cpu':>12}")
    for name in runs:
        p90 = sorted(times[name])[int(0.9 * len(times[name]))]
        print(f"{name:<26}{statistics.median(times[name]) * 1e6:>12.0f}{p90 * 1e6:>10.0f}"
              f"{statistics.median(cpu[name]) * 1e6:>12.0f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--busy", type=int, default=2)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--session", action="store_true")
    args = parser.parse_args()
    if args.session:
        session_main(args)
        return
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
