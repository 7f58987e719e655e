"""Per-step overhead: a cached trivial Session.run, and a chain of 1000 scalar adds.

Prints one table; TensorFlow (tf.compat.v1) and PyTorch eager run the same cases in the same
process when they are importable. Graph optimizers (constant folding would fold the chain) are
off on both graph systems, so the chain measures executor overhead per op. tensorflux runs
twice: elementwise fusion off (`global_jit_level=OFF`: one kernel per add) and on (`ON_1`: the
chain is one `_FusedElementwise` node); TensorFlow runs with grappler and XLA off.

    python bench/overhead.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _time(fn, repeat: int, inner: int) -> float:
    """Median seconds per call of `fn` over `repeat` rounds of `inner` calls."""
    fn()
    rounds = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        rounds.append((time.perf_counter() - start) / inner)
    return statistics.median(rounds)


def graph_cases(tf, repeat: int, optimizer_off: bool = True, jit_level=None) -> dict:
    results = {}
    graph = tf.Graph()
    with graph.as_default():
        trivial = tf.constant(1.0)
        start = tf.constant(np.float32(0.0))
        chain = start
        for _ in range(1000):
            chain = tf.add(chain, 1.0)
        fed = tf.placeholder(tf.float32, [])
        fed_chain = fed
        for _ in range(1000):
            fed_chain = tf.add(fed_chain, 1.0)
    config = None
    if optimizer_off:
        config = tf.ConfigProto(graph_options=tf.GraphOptions(
            optimizer_options=tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0)))
        if jit_level is not None:
            config.graph_options.optimizer_options.global_jit_level = jit_level
        try:
            if not hasattr(config.graph_options, "rewrite_options"):
                raise ImportError
            from tensorflow.core.protobuf import rewriter_config_pb2

            off = rewriter_config_pb2.RewriterConfig.OFF
            rewrite = config.graph_options.rewrite_options
            rewrite.constant_folding = off
            rewrite.arithmetic_optimization = off
            rewrite.dependency_optimization = off
            rewrite.loop_optimization = off
            rewrite.function_optimization = off
            rewrite.disable_meta_optimizer = True
        except ImportError:
            pass
    with tf.Session(graph=graph, config=config) as sess:
        results["trivial Session.run (us)"] = _time(lambda: sess.run(trivial), repeat, 2000) * 1e6
        results["1000-add chain (us/op)"] = _time(lambda: sess.run(chain), repeat, 20) * 1e6 / 1000
        feed = {fed: np.float32(1.0)}
        results["1000-add chain, fed (us/op)"] = (
            _time(lambda: sess.run(fed_chain, feed), repeat, 20) * 1e6 / 1000)
    return results


def torch_cases(torch, repeat: int) -> dict:
    one = torch.tensor(1.0)

    def chain():
        value = torch.tensor(0.0)
        for _ in range(1000):
            value = torch.add(value, one)
        return value

    per_op = _time(chain, repeat, 5) * 1e6 / 1000
    return {"trivial Session.run (us)": None, "1000-add chain (us/op)": per_op,
            "1000-add chain, fed (us/op)": per_op}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    import tensorflux

    levels = tensorflux.OptimizerOptions
    columns = {"tensorflux fusion off": graph_cases(tensorflux, args.repeat,
                                                    jit_level=levels.OFF),
               "tensorflux fusion on": graph_cases(tensorflux, args.repeat,
                                                   jit_level=levels.ON_1)}
    try:
        import os

        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow.compat.v1 as tf1

        tf1.disable_v2_behavior()
        columns["tensorflow (tf.compat.v1)"] = graph_cases(tf1, args.repeat)
    except ImportError:
        pass
    try:
        import torch

        columns["pytorch eager"] = torch_cases(torch, args.repeat)
    except ImportError:
        pass
    rows = list(columns["tensorflux fusion off"])
    names = list(columns)
    width = max(len(r) for r in rows) + 2
    print("case".ljust(width) + "".join(n.rjust(28) for n in names))
    for row in rows:
        cells = []
        for name in names:
            value = columns[name].get(row)
            cells.append(("-" if value is None else f"{value:.2f}").rjust(28))
        print(row.ljust(width) + "".join(cells))


if __name__ == "__main__":
    main()
