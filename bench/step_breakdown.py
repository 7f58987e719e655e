"""Per-op time of one training step, tensorflux next to TensorFlow (FULL_TRACE step stats).

    cd <worktree> && PYTHONPATH=$PWD TF_CPP_MIN_LOG_LEVEL=3 TF_USE_LEGACY_KERAS=1 \
        /opt/tfref/bin/python bench/step_breakdown.py --model cnn --steps 20

Both frameworks run the model of `bench/training.py`; traced steps alternate between them
(the same machine load). Each node's time is its traced wall time (TF: op_end_rel_micros),
summed per op type and given as the median over the traced steps; the process CPU time of
an untraced step is printed too. Nodes are grouped by op type and by the layer scope.
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import training  # noqa: E402  (bench/training.py: the models)


def _session(tf, model: str):
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        train, feed, _batch, *_ = training.GRAPHS[model](tf)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
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
    args = parser.parse_args()
    systems = {}
    if args.only != "tensorflow":
        import tensorflux

        systems["tfx"] = tensorflux
    if args.only != "tensorflux":
        systems["tf"] = training._tf_compat_v1()
    sessions = {k: _session(tf, args.model) for k, tf in systems.items()}
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
    medians = {k: {g: statistics.median(v) for g, v in samples[k].items()} for k in systems}
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
