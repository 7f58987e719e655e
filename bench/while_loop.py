"""Per-iteration cost of `tf.while_loop`: 10,000 iterations of a tiny loop.

Cases: a counter loop (`i + 1` while `i < n`), a two-variable loop (counter and a float
accumulator), the same two-variable loop with `parallel_iterations=1`, and the forward plus
backward pass of a float loop (the backward loop pops the forward values from stacks). Prints
microseconds per iteration; TensorFlow's tf.compat.v1 `while_loop` runs the same cases in the
same process when it is importable (this script may import TensorFlow; the package never does).

    python bench/while_loop.py [--repeat N] [--iterations N]
"""

from __future__ import annotations

import argparse
import statistics
import time


def _time(fn, repeat: int) -> float:
    """Median seconds of one call of `fn` over `repeat` calls (after a warm-up call)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cases(tf, iterations: int, repeat: int) -> dict:
    graph = tf.Graph()
    with graph.as_default():
        n = tf.placeholder(tf.int32, [])
        counter = tf.while_loop(lambda i: i < n, lambda i: i + 1, [0])
        pair = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + 0.5),
                             [0, tf.constant(0.0)])
        serial = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + 0.5),
                               [0, tf.constant(0.0)], parallel_iterations=1)
        x = tf.placeholder(tf.float32, [])
        _, grown = tf.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * 1.0001),
                                 [0, x])
        grad = tf.gradients(grown, x)[0]
    per = 1e6 / iterations
    feed = {n: iterations}
    results = {}
    with tf.Session(graph=graph) as sess:
        results["counter loop (us/iter)"] = _time(lambda: sess.run(counter, feed), repeat) * per
        results["2-var loop (us/iter)"] = _time(lambda: sess.run(pair, feed), repeat) * per
        results["2-var loop, parallel_iterations=1 (us/iter)"] = (
            _time(lambda: sess.run(serial, feed), repeat) * per)
        feed_x = {n: iterations, x: 1.0}
        results["forward + backward (us/iter)"] = (
            _time(lambda: sess.run(grad, feed_x), repeat) * per)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=10_000)
    args = parser.parse_args()
    import tensorflux

    columns = {"tensorflux": cases(tensorflux, args.iterations, args.repeat)}
    try:
        import os

        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow.compat.v1 as tf1

        tf1.disable_v2_behavior()
        tf1.disable_control_flow_v2()
        columns["tensorflow (tf.compat.v1)"] = cases(tf1, args.iterations, args.repeat)
    except ImportError:
        pass
    rows = list(columns["tensorflux"])
    names = list(columns)
    width = max(len(r) for r in rows) + 2
    print(f"{args.iterations} iterations")
    print("case".ljust(width) + "".join(n.rjust(28) for n in names))
    for row in rows:
        cells = [f"{columns[name][row]:.2f}".rjust(28) for name in names]
        print(row.ljust(width) + "".join(cells))


if __name__ == "__main__":
    main()
