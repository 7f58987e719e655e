"""Per-op wall time and process CPU time of one training step: how many cores each op keeps
busy (tensorflux), next to TensorFlow's traced per-op wall time and the threads it ran on.

    cd <worktree> && PYTHONPATH=$PWD TF_CPP_MIN_LOG_LEVEL=3 TF_USE_LEGACY_KERAS=1 \
        /opt/tfref/bin/python bench/op_cores.py --model cnn --steps 15

Traced steps run every node in the step's driver one after another (FULL_TRACE); the executor's
clock is swapped for `perf_counter_ns` (wall) in one traced step and for `process_time_ns`
(CPU of every thread of the process: the intra-op helpers, BLAS's and numba's threads) in the
next, so `cpu / wall` per op is the cores it kept busy. Untraced steps give the whole step's
wall and process CPU (the executor may overlap independent ops there). TF's column is its
traced wall time per op (op_end_rel_micros) and the number of distinct threads that ran that
op group in the step (its inter-op pool; oneDNN's intra-op threads are not listed by TF).
Medians over the steps (`--stat min` for minima); frameworks alternate step by step.
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import time
import types as types_module

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import step_breakdown  # noqa: E402  (the same models and sessions)
import training  # noqa: E402


def _tfx_traced(tf, sess, train, feed, executor, clock_fn) -> dict:
    clock = types_module.SimpleNamespace(**vars(time))
    clock.time_ns = clock_fn
    saved = executor.time
    executor.time = clock
    try:
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        meta = tf.RunMetadata()
        sess.run(train, feed, options=options, run_metadata=meta)
    finally:
        executor.time = saved
    per_node: dict = collections.defaultdict(float)
    for dev in meta.step_stats.dev_stats:
        for node in dev.node_stats:
            name = node.node_name.split(":")[0]
            if name == "_SOURCE" or name.startswith("_"):
                continue
            per_node[name] += (node.op_end_rel_micros - node.op_start_rel_micros) / 1e3
    return per_node


def _tf_traced(tf, sess, train, feed) -> tuple[dict, dict]:
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    meta = tf.RunMetadata()
    sess.run(train, feed, options=options, run_metadata=meta)
    per_node: dict = collections.defaultdict(float)
    threads: dict = collections.defaultdict(set)
    for dev in meta.step_stats.dev_stats:
        if "/memory" in dev.device or "stream" in dev.device:
            continue
        for node in dev.node_stats:
            name = node.node_name.split(":")[0]
            if name == "_SOURCE" or name.startswith("_"):
                continue
            per_node[name] += (node.op_end_rel_micros - node.op_start_rel_micros) / 1e3
            threads[name].add(node.thread_id)
    return per_node, threads


def _untraced(sess, train, feed) -> tuple[float, float]:
    cpu0, wall0 = time.process_time(), time.perf_counter()
    sess.run(train, feed)
    return (time.process_time() - cpu0) * 1e3, (time.perf_counter() - wall0) * 1e3


def _grouped(per_node: dict, types: dict) -> dict:
    groups: dict = collections.defaultdict(float)
    for name, ms in per_node.items():
        groups[step_breakdown._group(name, types.get(name, "?"))] += ms
    return groups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="cnn")
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--stat", choices=("median", "min"), default="median")
    parser.add_argument("--no-tf", action="store_true")
    parser.add_argument("--intra", type=int, default=0, help="intra_op_parallelism_threads")
    parser.add_argument("--assume-quiet", action="store_true",
                        help="the thread budget sees no other process (a quiet machine's "
                             "configuration: BLAS on every core, no row splits)")
    args = parser.parse_args()
    if args.assume_quiet:
        from tensorflux.runtime import thread_budget

        thread_budget._PROCESS.probe = lambda cores: 0.0
    stat = statistics.median if args.stat == "median" else min
    import tensorflux
    from tensorflux.runtime import executor

    sess, train, feed, types = step_breakdown._session(tensorflux, args.model, False)
    if args.intra:
        sess.close()
        graph = tensorflux.Graph()
        with graph.as_default():
            tensorflux.set_random_seed(0)
            train, feed, _batch, *_ = training.GRAPHS[args.model](tensorflux)
            init = tensorflux.global_variables_initializer()
        config = tensorflux.ConfigProto(intra_op_parallelism_threads=args.intra)
        sess = tensorflux.Session(graph=graph, config=config)
        sess.run(init)
        types = {op.name: op.type for op in graph.get_operations()}
    tf = None if args.no_tf else training._tf_compat_v1()
    if tf is not None:
        tsess, ttrain, tfeed, ttypes = step_breakdown._session(tf, args.model, False)
    for _ in range(3):
        sess.run(train, feed)
    walls: dict = collections.defaultdict(list)
    cpus: dict = collections.defaultdict(list)
    tf_walls: dict = collections.defaultdict(list)
    tf_threads: dict = collections.defaultdict(list)
    steps: dict = {"tfx": [], "tf": []}
    for _ in range(args.steps):
        wall = _grouped(_tfx_traced(tensorflux, sess, train, feed, executor,
                                    time.perf_counter_ns), types)
        cpu = _grouped(_tfx_traced(tensorflux, sess, train, feed, executor,
                                   time.process_time_ns), types)
        for group in wall:
            walls[group].append(wall[group])
            cpus[group].append(cpu.get(group, 0.0))
        steps["tfx"].append(_untraced(sess, train, feed))
        if tf is not None:
            per_node, threads = _tf_traced(tf, tsess, ttrain, tfeed)
            groups = _grouped(per_node, ttypes)
            tids: dict = collections.defaultdict(set)
            for name, ids in threads.items():
                tids[step_breakdown._group(name, ttypes.get(name, "?"))] |= ids
            for group, ms in groups.items():
                tf_walls[group].append(ms)
                tf_threads[group].append(len(tids[group]))
            steps["tf"].append(_untraced(tsess, ttrain, tfeed))
    print(f"# {training.machine_load()}; {os.getloadavg()[0]:.2f} load")
    for key, rows in steps.items():
        if rows:
            print(f"# {key}: untraced step {stat(r[1] for r in rows):.1f} ms wall, "
                  f"{stat(r[0] for r in rows):.1f} ms process CPU "
                  f"({stat(r[0] / r[1] for r in rows):.2f} cores)")
    med = {g: (stat(walls[g]), stat(cpus[g])) for g in walls}
    tfm = {g: stat(v) for g, v in tf_walls.items()}
    names = sorted(set(med) | set(tfm), key=lambda g: -max(med.get(g, (0, 0))[0],
                                                             tfm.get(g, 0.0)))
    print(f"{'op [layer]':<52}{'wall':>8}{'cpu':>8}{'cores':>7}{'TF wall':>9}{'TF thr':>7}")
    total = [0.0, 0.0, 0.0]
    for group in names:
        w, c = med.get(group, (0.0, 0.0))
        t = tfm.get(group, 0.0)
        total = [total[0] + w, total[1] + c, total[2] + t]
        if max(w, t) < 0.05:
            continue
        thr = statistics.median(tf_threads[group]) if tf_threads.get(group) else 0
        print(f"{group:<52}{w:>8.2f}{c:>8.2f}{c / w if w else 0:>7.2f}{t:>9.2f}{thr:>7.0f}")
    print(f"{'sum':<52}{total[0]:>8.2f}{total[1]:>8.2f}"
          f"{total[1] / total[0] if total[0] else 0:>7.2f}{total[2]:>9.2f}")


if __name__ == "__main__":
    main()
