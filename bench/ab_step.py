"""Interleaved A/B of the CNN training step: this stop's change on and off in one process (and
TensorFlow's step in the same rounds), CPU and wall time per step.

The change (stop 23, cnnwall helper): on a quiet machine (BLAS with several threads) the
convolutions take the intra-op split while they run (`intra_op.own_kernel`: BLAS one thread,
their parts on the helpers) and the compiled pooling kernels split over BLAS's thread count;
under load the direct convolution's batch parts run on the split's helpers. "old" turns all
three off per call. `--assume-quiet` makes the thread budget see no other process (the quiet
configuration on a shared machine). (Earlier A/Bs -- vector max pooling, grouped im2col, the
tiled max-pool gradient, the fused pool gradients, the direct convolution -- are in this
file's history.)

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
    parser.add_argument("--assume-quiet", action="store_true",
                        help="the thread budget sees no other process")
    args = parser.parse_args()
    import tensorflux
    from tensorflux.lib.numerics import conv_direct, intra_op, pooling_jit
    from tensorflux.runtime import thread_budget

    if args.assume_quiet:
        thread_budget._PROCESS.probe = lambda cores: 0.0
    new_batches = pooling_jit._batches

    def old_batches(fn, n, nbytes):
        threads = intra_op.splits()
        if threads <= 1 or n <= 1 or nbytes < pooling_jit.SPLIT_MIN_BYTES:
            fn(0, n)
            return
        ranges = intra_op.balanced_parts(n, threads * intra_op.CHUNKS_PER_THREAD)
        intra_op.run_parts(lambda i: fn(*ranges[i]), len(ranges))

    sessions = {name: _session(tensorflux, args.model, args.one_thread)
                for name in ("old", "new")}
    hooks = list(intra_op._OWN)
    if not args.no_tf:
        sessions["tf"] = _session(training._tf_compat_v1(), args.model, args.one_thread)
    runs = list(sessions)
    cpu: dict = {k: [] for k in runs}
    wall: dict = {k: [] for k in runs}
    print(f"# {training.machine_load()}")
    for _ in range(args.rounds):
        for name in runs:
            intra_op._OWN[:] = [None, None] if name == "old" else hooks
            pooling_jit._batches = old_batches if name == "old" else new_batches
            conv_direct.SPLIT_UNDER_LOAD = name != "old"
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
