"""Interleaved A/B of the CNN training step: this stop's conv/pool kernel changes on and off
in one process (and TensorFlow's step in the same rounds), CPU and wall time per step.

    PYTHONPATH=$PWD /opt/tfref/bin/python bench/ab_step.py [--model cnn] [--rounds 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

if "--one-thread" in sys.argv:  # before NumPy loads OpenBLAS
    os.environ["OPENBLAS_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import training  # noqa: E402


def _old_max_pool_grad(pooling_jit):
    def max_pool_grad(x, g, geo):
        kh, kw, sh, sw, top, left, oh, ow = pooling_jit._window(x.shape, geo)
        n, h, wd, c = x.shape
        dx = np.zeros((n, h * wd, c), dtype=g.dtype)
        x, g = np.ascontiguousarray(x), np.ascontiguousarray(g)
        pooling_jit._batches(lambda lo, hi: pooling_jit._max_pool_grad(
            x[lo:hi], g[lo:hi], kh, kw, sh, sw, top, left, dx[lo:hi]), n, x.nbytes)
        return dx.reshape(x.shape)
    return max_pool_grad


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="cnn")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=3, help="steps per variant per round")
    parser.add_argument("--no-tf", action="store_true")
    parser.add_argument("--one-thread", action="store_true",
                        help="one BLAS, intra-op and inter-op thread (CPU ~ one core's work)")
    args = parser.parse_args()
    import tensorflux
    from tensorflux.lib.numerics import conv_grouped, pooling_jit

    variants = {
        "old": {"cols": 0, "pool": _old_max_pool_grad(pooling_jit)},
        "new": {"cols": conv_grouped.MAX_COLS, "pool": pooling_jit.max_pool_grad},
    }
    systems = {"tfx": tensorflux}
    if not args.no_tf:
        systems["tf"] = training._tf_compat_v1()
    sessions = {}
    for key, tf in systems.items():
        graph = tf.Graph()
        with graph.as_default():
            tf.set_random_seed(0)
            train, feed, *_ = training.GRAPHS[args.model](tf)
            init = tf.global_variables_initializer()
        config = tf.ConfigProto(intra_op_parallelism_threads=1,
                                inter_op_parallelism_threads=1) if args.one_thread else None
        sess = tf.Session(graph=graph, config=config)
        sess.run(init)
        for _ in range(3):
            sess.run(train, feed)
        sessions[key] = (sess, train, feed)
    runs = ["old", "new"] + (["tf"] if "tf" in systems else [])
    cpu: dict = {k: [] for k in runs}
    wall: dict = {k: [] for k in runs}
    print(f"# {training.machine_load()}")
    for _ in range(args.rounds):
        for name in runs:
            if name == "tf":
                sess, train, feed = sessions["tf"]
            else:
                conv_grouped.MAX_COLS = variants[name]["cols"]
                pooling_jit.max_pool_grad = variants[name]["pool"]
                sess, train, feed = sessions["tfx"]
            sess.run(train, feed)
            for _ in range(args.steps):
                c0, w0 = time.process_time(), time.perf_counter()
                sess.run(train, feed)
                cpu[name].append(time.process_time() - c0)
                wall[name].append(time.perf_counter() - w0)
    print(f"# after: {training.machine_load()}")
    print(f"{'variant':<8}{'wall med':>10}{'wall min':>10}{'cpu med':>10}{'cpu min':>10}")
    for name in runs:
        print(f"{name:<8}{statistics.median(wall[name]) * 1e3:>10.1f}"
              f"{min(wall[name]) * 1e3:>10.1f}{statistics.median(cpu[name]) * 1e3:>10.1f}"
              f"{min(cpu[name]) * 1e3:>10.1f}")


if __name__ == "__main__":
    main()
