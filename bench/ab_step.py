"""Interleaved A/B of the CNN training step: this stop's change on and off in one process (and
TensorFlow's step in the same rounds), CPU and wall time per step.

The change (stop 22, second CNN helper): float32 max pooling on explicit 16-float vectors
(`lib/numerics/pool_vector_jit.py`: MaxPool, and MaxPoolGrad of overlapping windows), switched
per call by `pooling_jit.VECTOR_MIN_CHANNELS` (a huge value: the scalar compiled kernels), set
before each variant's steps. (Earlier A/Bs -- grouped im2col, the tiled max-pool gradient, the
fused pool gradients, the direct convolution -- are in this file's history.)

    PYTHONPATH=$PWD /opt/tfref/bin/python bench/ab_step.py [--model cnn|cifar10] [--rounds 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

if "--one-thread" in sys.argv:  # before NumPy loads OpenBLAS
    os.environ["OPENBLAS_NUM_THREADS"] = "1"


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import training  # noqa: E402


def _session(tf, model: str, one_thread: bool):
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        train, feed, *_ = training.GRAPHS[model](tf)
        init = tf.global_variables_initializer()
    config = tf.ConfigProto(intra_op_parallelism_threads=1,
                            inter_op_parallelism_threads=1) if one_thread else None
    sess = tf.Session(graph=graph, config=config)
    sess.run(init)
    for _ in range(3):  # the step graph is rewritten (and its kernels built) here
        sess.run(train, feed)
    return sess, train, feed


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
    from tensorflux.lib.numerics import pooling_jit

    channels = {"old": 1 << 30, "new": pooling_jit.VECTOR_MIN_CHANNELS}
    sessions = {}
    for name in channels:
        pooling_jit.VECTOR_MIN_CHANNELS = channels[name]
        sessions[name] = _session(tensorflux, args.model, args.one_thread)
    if not args.no_tf:
        sessions["tf"] = _session(training._tf_compat_v1(), args.model, args.one_thread)
    runs = list(sessions)
    cpu: dict = {k: [] for k in runs}
    wall: dict = {k: [] for k in runs}
    print(f"# {training.machine_load()}")
    for _ in range(args.rounds):
        for name in runs:
            pooling_jit.VECTOR_MIN_CHANNELS = channels.get(name, 1 << 30)
            sess, train, feed = sessions[name]
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
