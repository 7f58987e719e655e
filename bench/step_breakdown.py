"""Per-op time of one training step, tensorflux next to TensorFlow (FULL_TRACE step stats).

    cd <worktree> && PYTHONPATH=$PWD TF_CPP_MIN_LOG_LEVEL=3 TF_USE_LEGACY_KERAS=1 \
        /opt/tfref/bin/python bench/step_breakdown.py --model cnn --steps 20

Both frameworks run the model of `bench/training.py`; traced steps alternate between them
(the same machine load). Each node's time is its traced wall time (TF: op_end_rel_micros),
summed per op type and given as the median (or `--stat min`) over the traced steps; the
process CPU time of an untraced step is printed too. Nodes are grouped by op type and by the
layer scope.

`--one-thread` runs both with one intra-op and one inter-op thread (and one BLAS thread,
set before NumPy loads), and times tensorflux's nodes by the CPU time of the thread running
them (the executor's clock is swapped for `time.thread_time_ns` in this process only):
per-op CPU, which other processes' load changes far less than wall time. TF's op times stay
wall times (its minimum over the steps is the closest to CPU).
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import time
import types as types_module

if "--one-thread" in sys.argv:  # before NumPy loads OpenBLAS
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    os.environ["NUMBA_NUM_THREADS"] = "1"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import training  # noqa: E402  (bench/training.py: the models)


def _session(tf, model: str, one_thread: bool):
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        train, feed, _batch, *_ = training.GRAPHS[model](tf)
        init = tf.global_variables_initializer()
    config = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1) \
        if one_thread else None
    sess = tf.Session(graph=graph, config=config)
    sess.run(init)
    for _ in range(3):
        sess.run(train, feed)
    types = {op.name: op.type for op in graph.get_operations()}
    return sess, train, feed, types


def _traced(tf, sess, train, feed, types) -> tuple[dict, float, float]:
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    meta = tf.RunMetadata()
    sess.run(train, feed, options=options, run_metadata=meta)
    per_node: dict = collections.defaultdict(float)
    for dev in meta.step_stats.dev_stats:
        if "/memory" in dev.device or "stream" in dev.device:
            continue
        for node in dev.node_stats:
            name = node.node_name.split(":")[0]
            if name == "_SOURCE" or name.startswith("_"):
                continue
            micros = node.op_end_rel_micros - node.op_start_rel_micros
            per_node[name] += micros / 1e3
    cpu0, wall0 = time.process_time(), time.perf_counter()
    sess.run(train, feed)
    return per_node, time.process_time() - cpu0, time.perf_counter() - wall0


def _group(name: str, op_type: str) -> str:
    scope = name.split("/")
    layer = next((s for s in scope if s.startswith(("conv2d", "max_pooling", "dense"))),
                 scope[0])
    return f"{op_type} [{layer}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="cnn")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--only", choices=("both", "tensorflux", "tensorflow"), default="both")
    parser.add_argument("--stat", choices=("median", "min"), default="median")
    parser.add_argument("--one-thread", action="store_true")
    args = parser.parse_args()
    stat = statistics.median if args.stat == "median" else min
    systems = {}
    if args.only != "tensorflow":
        import tensorflux

        systems["tfx"] = tensorflux
        if args.one_thread:
            from tensorflux.runtime import executor

            clock = types_module.SimpleNamespace(**vars(time))
            clock.time_ns = time.thread_time_ns
            executor.time = clock
    if args.only != "tensorflux":
        systems["tf"] = training._tf_compat_v1()
    sessions = {k: _session(tf, args.model, args.one_thread) for k, tf in systems.items()}
    samples: dict = {k: collections.defaultdict(list) for k in systems}
    steps: dict = {k: [] for k in systems}
    for _ in range(args.steps):
        for key, tf in systems.items():
            sess, train, feed, types = sessions[key]
            per_node, cpu, wall = _traced(tf, sess, train, feed, types)
            groups: dict = collections.defaultdict(float)
            for name, ms in per_node.items():
                groups[_group(name, types.get(name, "?"))] += ms
            for group in set(groups) | set(samples[key]):
                samples[key][group].append(groups.get(group, 0.0))
            steps[key].append((cpu * 1e3, wall * 1e3, sum(per_node.values())))
    print(f"# {training.machine_load()}")
    for key in systems:
        cpu = statistics.median(s[0] for s in steps[key])
        wall = statistics.median(s[1] for s in steps[key])
        ops = statistics.median(s[2] for s in steps[key])
        print(f"# {key}: untraced step {wall:.1f} ms wall, {cpu:.1f} ms CPU; traced op sum "
              f"{ops:.1f} ms")
    medians = {k: {g: stat(v) for g, v in samples[k].items()} for k in systems}
    names = sorted(set().union(*medians.values()),
                   key=lambda g: -max(m.get(g, 0.0) for m in medians.values()))
    print(f"{'op [layer]':<58}" + "".join(f"{k + ' ms':>10}" for k in systems))
    for group in names:
        if max(m.get(group, 0.0) for m in medians.values()) < 0.05:
            continue
        print(f"{group:<58}" + "".join(f"{medians[k].get(group, 0.0):>10.2f}"
                                       for k in systems))


if __name__ == "__main__":
    main()
