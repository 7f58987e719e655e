"""Model parallelism over local devices: do independent partitions overlap, and what does
partitioning cost per step?

Cases:
  - two independent chains of matmul+tanh (the paper's model-parallel LSTM layers, reduced to
    their dense core), on one device, and split over /cpu:0 and /cpu:1. "busy" is the sum of
    the partitions' kernel times from the step stats; overlap = busy / wall (1.0 means the
    partitions ran one after the other, 2.0 perfectly side by side on the 2 cores);
  - per-step overhead: the first run of a signature (prune, rewrites, placement, partitioning,
    executor build) versus cached runs, for a 200-op graph on one device and on three;
  - `partition()` alone on that graph, and the error of the lossy bfloat16 transfers.

BLAS runs single-threaded by default (--blas-threads) so that the overlap comes from the
partitions, not from NumPy's own threads. TensorFlow (tf.compat.v1) runs the chain cases in
the same process when it is importable.

    python bench/model_parallel.py [--size N] [--depth D] [--repeat R] [--blas-threads T]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ARGS = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ARGS.add_argument("--size", type=int, default=384, help="matrix side")
ARGS.add_argument("--depth", type=int, default=6, help="matmuls per chain")
ARGS.add_argument("--repeat", type=int, default=7, help="timed steps per case")
ARGS.add_argument("--blas-threads", type=int, default=1, help="BLAS threads per matmul")

if __name__ == "__main__":
    _OPTIONS = ARGS.parse_args()
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = str(_OPTIONS.blas_threads)

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def _median_time(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def build_chains(tf, size: int, depth: int, split: bool):
    rng = np.random.RandomState(0)
    x = tf.placeholder(tf.float32, [size, size], name="x")
    weights = [tf.constant(rng.standard_normal((size, size)).astype(np.float32) / size ** 0.5)
               for _ in range(2)]
    heads = []
    for chain in range(2):
        with tf.device(f"/cpu:{chain if split else 0}"):
            h = x
            for _ in range(depth):
                h = tf.tanh(tf.matmul(h, weights[chain]))
            heads.append(h)
    with tf.device("/cpu:0"):
        out = heads[0] + heads[1]
    return x, out


def _busy_micros(tf, sess, out, feed) -> float:
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    meta = tf.RunMetadata()
    sess.run(out, feed, options=options, run_metadata=meta)
    busy = 0.0
    for dev in meta.step_stats.dev_stats:
        for node in dev.node_stats:
            if not node.node_name.endswith(("_recv", "_send")) and "/_recv_" not in \
                    node.node_name:
                busy += node.all_end_rel_micros
    return busy


def chain_cases(tf, size, depth, repeat, name) -> list:
    rows = []
    data = np.random.RandomState(1).standard_normal((size, size)).astype(np.float32)
    for split in (False, True):
        graph = tf.Graph()
        with graph.as_default():
            x, out = build_chains(tf, size, depth, split)
            config = tf.ConfigProto(device_count={"CPU": 2})
            with tf.Session(config=config) as sess:
                feed = {x: data}
                wall = _median_time(lambda sess=sess, out=out, feed=feed: sess.run(out, feed),
                                    repeat)
                busy = _busy_micros(tf, sess, out, feed) / 1e6
        label = "2 chains split /cpu:0+/cpu:1" if split else "2 chains on /cpu:0"
        rows.append((name, label, wall * 1e3, busy * 1e3, busy / wall))
    return rows


def overhead_cases(tf, repeat) -> list:
    rows = []
    for cpus in (1, 3):
        graph = tf.Graph()
        with graph.as_default():
            x = tf.placeholder(tf.float32, [8], name="x")
            h = x
            for k in range(200):
                with tf.device(f"/cpu:{(k // 20) % cpus}"):
                    h = tf.tanh(h) * 0.5 + 0.1
            config = tf.ConfigProto(device_count={"CPU": cpus})
            with tf.Session(config=config) as sess:
                feed = {x: np.ones(8, np.float32)}
                start = time.perf_counter()
                sess.run(h, feed)
                first = time.perf_counter() - start
                cached = _median_time(lambda sess=sess, h=h, feed=feed: sess.run(h, feed),
                                      repeat * 5)
        rows.append((f"{cpus} device(s), 600 ops", first * 1e3, cached * 1e3))
    return rows


def partition_cost(tf) -> float:
    from tensorflux.runtime import partition, placer, subgraph
    from tensorflux.runtime.device import local_devices

    devices = local_devices(cpu_count=3)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [8], name="x")
        h = x
        for k in range(200):
            with tf.device(f"/cpu:{(k // 20) % 3}"):
                h = tf.tanh(h) * 0.5 + 0.1

    def once():
        nodes, _, _ = subgraph.build_step_graph(graph, [x], [h], [])
        placer.place(nodes, devices, policy=placer.SIMPLE)
        start = time.perf_counter()
        partition.partition(nodes, {d.name: d for d in devices})
        return time.perf_counter() - start

    return statistics.median(once() for _ in range(5))


def bfloat16_error(tf) -> tuple:
    data = np.random.RandomState(2).standard_normal(100_000).astype(np.float32)
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [data.size])
        with tf.device("/cpu:1"):
            y = tf.identity(x * 1.0)
        config = tf.ConfigProto(device_count={"CPU": 2}, graph_options=tf.GraphOptions(
            enable_bfloat16_sendrecv=True))
        with tf.Session(config=config) as sess:
            got = sess.run(y, {x: data})
    relative = np.abs(got - data) / np.abs(data)
    return float(relative.mean()), float(relative.max())


def main(options) -> None:
    import tensorflux as tfx

    rows = chain_cases(tfx, options.size, options.depth, options.repeat, "tensorflux")
    try:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow.compat.v1 as tf_ref

        tf_ref.disable_v2_behavior()
        rows += chain_cases(tf_ref, options.size, options.depth, options.repeat, "tensorflow")
    except ImportError:
        pass
    print(f"Model parallelism: 2 chains x {options.depth} x (matmul {options.size}^2 + tanh), "
          f"BLAS threads = {options.blas_threads}")
    print(f"{'system':<12} {'case':<30} {'wall ms':>9} {'busy ms':>9} {'overlap':>8}")
    for system, label, wall, busy, overlap in rows:
        print(f"{system:<12} {label:<30} {wall:9.2f} {busy:9.2f} {overlap:8.2f}")
    ours = [r for r in rows if r[0] == "tensorflux"]
    print(f"split / one device wall time: {ours[1][2] / ours[0][2]:.2f}")
    print()
    print(f"{'per-step overhead':<26} {'first run ms':>12} {'cached ms':>10}")
    for label, first, cached in overhead_cases(tfx, options.repeat):
        print(f"{label:<26} {first:12.2f} {cached:10.3f}")
    print(f"partition() of that graph on 3 devices: {partition_cost(tfx) * 1e3:.2f} ms "
          "(paid once per signature; cached steps skip it)")
    mean, worst = bfloat16_error(tfx)
    print(f"bfloat16 transfers: mean relative error {mean:.2e} (2^{np.log2(mean):.1f}), "
          f"max {worst:.2e} (2^{np.log2(worst):.1f}); bound 2^-7 = {2.0 ** -7:.2e}")


if __name__ == "__main__":
    main(_OPTIONS)
