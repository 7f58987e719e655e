"""How the MLP step's products use two cores: the raw NumPy/OpenBLAS products of one
784-1024-1024-10 b128 training step, run three ways, interleaved round by round in one process
(wall and process CPU per step; medians and minimums):

- `blas2`: OpenBLAS with 2 threads per product, the products one after another;
- `split`: 1 BLAS thread, each large product cut into 2 row blocks run at once (caller + one
  helper thread), as `lib/numerics/intra_op.matmul` does;
- `pairs`: 1 BLAS thread, the backward's independent products of a layer (its weight gradient
  and its input gradient) run at once on two threads; the products with no partner are split
  as in `split`;
- `blas1`: 1 BLAS thread, one after another (the per-core work; CPU ~ one core).

The step's elementwise work (bias, relu, their gradients, the SGD updates) runs in the caller
in every variant, so the variants differ only in how the products use the cores.

    PYTHONPATH=$PWD /opt/tfref/bin/python bench/mlp_cores.py [--rounds 40] [--steps 3]

`--step` runs the whole tensorflux training step the same ways instead (the thread budget's
BLAS count forced per round: `tfx-blas2` = 2 BLAS threads, `tfx-split` = 1 BLAS thread and
the intra-op split in 2, `tfx-overlap` = 2 BLAS threads and the inter-op overlap's plan,
`TFX_OVERLAP=1`, which pairs a layer's two gradient products on 1 BLAS thread each), with
TensorFlow's and PyTorch's steps in the same rounds:

    PYTHONPATH=$PWD TF_CPP_MIN_LOG_LEVEL=3 TF_USE_LEGACY_KERAS=1 \
        /opt/tfref/bin/python bench/mlp_cores.py --step [--model mlp] [--rounds 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time

import numpy as np
import threadpoolctl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class Helper:
    """One helper thread: `start(fn)` hands it `fn`, `wait()` joins (an Event each way)."""

    def __init__(self):
        self._go = threading.Event()
        self._done = threading.Event()
        self._fn = None
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self):
        while True:
            self._go.wait()
            self._go.clear()
            self._fn()
            self._done.set()

    def start(self, fn):
        self._done.clear()
        self._fn = fn
        self._go.set()

    def wait(self):
        self._done.wait()


def _split(helper, a, b, out):
    """out = a @ b with a's rows cut in two: the second half on the helper."""
    half = a.shape[0] // 2
    helper.start(lambda: np.matmul(a[half:], b, out=out[half:]))
    np.matmul(a[:half], b, out=out[:half])
    helper.wait()


def _pair(helper, first, second):
    helper.start(second)
    first()
    helper.wait()


class Step:
    """The MLP's training step in NumPy with preallocated outputs."""

    def __init__(self, batch=128, sizes=(784, 1024, 1024, 10), seed=0):
        rng = np.random.RandomState(seed)
        f32 = np.float32
        self.x = rng.rand(batch, sizes[0]).astype(f32)
        self.w = [(rng.randn(i, o) * 0.05).astype(f32) for i, o in zip(sizes, sizes[1:])]
        self.b = [np.zeros(o, f32) for o in sizes[1:]]
        self.h = [np.empty((batch, o), f32) for o in sizes[1:]]
        self.dw = [np.empty_like(w) for w in self.w]
        self.dh = [np.empty((batch, o), f32) for o in sizes[1:-1]]
        self.labels = rng.randint(0, sizes[-1], batch)
        self.helper = Helper()

    def run(self, mode: str):
        h, w, b, dw, dh, x = self.h, self.w, self.b, self.dw, self.dh, self.x
        split = mode in ("split", "pairs")
        mm = (lambda a, m, o: _split(self.helper, a, m, o)) if split else (
            lambda a, m, o: np.matmul(a, m, out=o))
        # forward
        mm(x, w[0], h[0])
        h[0] += b[0]
        np.maximum(h[0], 0, out=h[0])
        mm(h[0], w[1], h[1])
        h[1] += b[1]
        np.maximum(h[1], 0, out=h[1])
        np.matmul(h[1], w[2], out=h[2])
        h[2] += b[2]
        # softmax xent gradient
        g = h[2] - h[2].max(axis=1, keepdims=True)
        np.exp(g, out=g)
        g /= g.sum(axis=1, keepdims=True)
        g[np.arange(len(g)), self.labels] -= 1.0
        g /= len(g)
        # backward: layer 3 (small products)
        np.matmul(h[1].T, g, out=dw[2])
        np.matmul(g, w[2].T, out=dh[1])
        db2 = g.sum(axis=0)
        dh[1] *= h[1] > 0
        # layer 2: dW2 = h1^T dz2 and dh1 = dz2 W2^T are independent
        if mode == "pairs":
            _pair(self.helper, lambda: np.matmul(h[0].T, dh[1], out=dw[1]),
                  lambda: np.matmul(dh[1], w[1].T, out=dh[0]))
        else:
            mm(h[0].T, dh[1], dw[1])
            mm(dh[1], w[1].T, dh[0])
        db1 = dh[1].sum(axis=0)
        dh[0] *= h[0] > 0
        mm(x.T, dh[0], dw[0])
        db0 = dh[0].sum(axis=0)
        # SGD updates
        for wi, dwi in zip(w, dw):
            dwi *= 0.01
            wi -= dwi
        for bi, dbi in zip(b, (db0, db1, db2)):
            bi -= 0.01 * dbi


MODES = ("blas2", "split", "pairs", "blas1")


def _forced_blas():
    """A switch of the thread budget's BLAS thread count: `force(n)` (None: the policy)."""
    from tensorflux.runtime import thread_budget

    policy = thread_budget.blas_threads
    forced = [None]

    def blas_threads(intra_op, cores, others=0.0, concurrent=1):
        if forced[0] is None:
            return policy(intra_op, cores, others, concurrent)
        return max(1, forced[0] // max(1, concurrent))

    thread_budget.blas_threads = blas_threads

    def force(threads):
        forced[0] = threads
        thread_budget._PROCESS.refresh_current()

    return force


def _tfx_session(tf, model: str):
    import training

    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        train, feed, *_ = training.GRAPHS[model](tf)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
    sess.run(init)
    sess.run(train, feed)  # the plan is built here
    return lambda: sess.run(train, feed)


def _with_threads(force, threads: int, step):
    def run():
        force(threads)
        return step()

    return run


def step_main(args) -> None:
    import step_floor
    import training

    import tensorflux

    force = _forced_blas()
    runs = {}
    for name, threads, overlap in (("tfx-blas2", 2, "0"), ("tfx-split", 1, "0"),
                                   ("tfx-overlap", 2, "1")):
        os.environ["TFX_OVERLAP"] = overlap
        force(threads)
        step = _tfx_session(tensorflux, args.model)
        runs[name] = _with_threads(force, threads, step)
    os.environ["TFX_OVERLAP"] = "0"
    import torch

    runs["tensorflow"] = step_floor._graph_step(training._tf_compat_v1(), args.model, False)
    runs["pytorch"] = step_floor._torch_step(torch, args.model)
    _rounds(runs, args.rounds, args.steps)


def _rounds(runs: dict, rounds: int, steps: int) -> None:
    wall = {m: [] for m in runs}
    cpu = {m: [] for m in runs}
    print(f"# load {os.getloadavg()}")
    for _ in range(rounds):
        for name, run in runs.items():
            run()
            for _ in range(steps):
                c0, w0 = time.process_time(), time.perf_counter()
                run()
                cpu[name].append(time.process_time() - c0)
                wall[name].append(time.perf_counter() - w0)
    print(f"# load after {os.getloadavg()}")
    print(f"{'variant':<12}{'wall med':>10}{'wall min':>10}{'cpu med':>10}{'cpu min':>10}")
    for name in runs:
        print(f"{name:<12}{statistics.median(wall[name]) * 1e3:>10.2f}"
              f"{min(wall[name]) * 1e3:>10.2f}{statistics.median(cpu[name]) * 1e3:>10.2f}"
              f"{min(cpu[name]) * 1e3:>10.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--step", action="store_true", help="the whole training step")
    parser.add_argument("--model", default="mlp")
    args = parser.parse_args()
    if args.step:
        step_main(args)
        return
    modes = args.modes.split(",")
    step = Step()
    controller = threadpoolctl.ThreadpoolController()
    wall = {m: [] for m in modes}
    cpu = {m: [] for m in modes}
    print(f"# load {os.getloadavg()}")
    for _ in range(args.rounds):
        for mode in modes:
            with controller.limit(limits=2 if mode == "blas2" else 1, user_api="blas"):
                # NOTE: after a 2-thread product OpenBLAS's idle worker spins for a while;
                # split/pairs rounds right after blas2 rounds then compete with it. Run them
                # in a process that never starts it (`--modes split,pairs,blas1` with
                # OPENBLAS_NUM_THREADS=1) to see them alone.
                step.run(mode)
                for _ in range(args.steps):
                    c0, w0 = time.process_time(), time.perf_counter()
                    step.run(mode)
                    cpu[mode].append(time.process_time() - c0)
                    wall[mode].append(time.perf_counter() - w0)
    print(f"# load after {os.getloadavg()}")
    print(f"{'mode':<8}{'wall med':>10}{'wall min':>10}{'cpu med':>10}{'cpu min':>10}")
    for mode in modes:
        print(f"{mode:<8}{statistics.median(wall[mode]) * 1e3:>10.2f}"
              f"{min(wall[mode]) * 1e3:>10.2f}{statistics.median(cpu[mode]) * 1e3:>10.2f}"
              f"{min(cpu[mode]) * 1e3:>10.2f}")


if __name__ == "__main__":
    main()
