"""Input pipeline throughput: reader -> parse -> shuffle_batch -> dequeue, and training fed by a
queue versus by feed_dict.

Cases (records or examples per second, higher is better):
  - per-record pipeline: TFRecordReader.read + parse_single_example + shuffle_batch (2 runner
    threads), the classic TF1 tutorial pipeline;
  - batched pipeline: read_up_to(256) + parse_example + shuffle_batch(enqueue_many=True);
  - training a small MLP whose batches come from the batched pipeline's queue; from a queue
    that batches in-memory arrays (tf.train.batch, 2 threads); and from the same arrays with
    feed_dict;
  - the CIFAR-10 tutorial's input (images/s): FixedLengthRecordReader over binary records
    (1 label byte + 3x32x32 pixel bytes), decode, random 24x24 crop, random flip, brightness
    and contrast, per-image standardization, then shuffle_batch with `--cifar-threads` runner
    threads (16 as in the tutorial) into batches of 128; the queue is first filled to
    min_after_dequeue, then batches are drained with no model (the pipeline's own rate, and
    its process CPU seconds per batch).

Prints one table; TensorFlow (tf.compat.v1) runs the same cases in the same process when it is
importable, and the last lines say which feeding method wins.

    python bench/input_pipeline.py [--records N] [--batch B] [--cifar-threads T]
                                   [--cifar-batches K] [--only-cifar]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

import numpy as np

FEATURES = 16


def write_records(tf, directory: str, count: int, shards: int = 2) -> tuple:
    """Writes `count` Examples (x: 16 floats, y: int64) into TFRecord shards; returns paths and
    the in-memory arrays."""
    rng = np.random.RandomState(0)
    xs = rng.randn(count, FEATURES).astype(np.float32)
    ws = rng.randn(FEATURES).astype(np.float32)
    ys = (xs @ ws > 0).astype(np.int64)
    paths = []
    per_shard = count // shards
    for shard in range(shards):
        path = os.path.join(directory, f"data-{shard}.tfrecord")
        with tf.python_io.TFRecordWriter(path) as writer:
            for i in range(shard * per_shard, (shard + 1) * per_shard):
                example = tf.train.Example(features=tf.train.Features(feature={
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=xs[i])),
                    "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[ys[i]])),
                }))
                writer.write(example.SerializeToString())
        paths.append(path)
    return paths, xs[:per_shard * shards], ys[:per_shard * shards]


def _features(tf):
    return {"x": tf.FixedLenFeature([FEATURES], tf.float32), "y": tf.FixedLenFeature([], tf.int64)}


def per_record_pipeline(tf, paths, batch):
    filenames = tf.train.string_input_producer(paths, num_epochs=1, seed=1)
    _, record = tf.TFRecordReader().read(filenames)
    parsed = tf.parse_single_example(record, _features(tf))
    return tf.train.shuffle_batch([parsed["x"], parsed["y"]], batch_size=batch,
                                  capacity=20 * batch, min_after_dequeue=5 * batch,
                                  num_threads=2, seed=2, allow_smaller_final_batch=True)


def batched_pipeline(tf, paths, batch):
    filenames = tf.train.string_input_producer(paths, num_epochs=1, seed=1)
    _, records = tf.TFRecordReader().read_up_to(filenames, 256)
    parsed = tf.parse_example(records, _features(tf))
    return tf.train.shuffle_batch([parsed["x"], parsed["y"]], batch_size=batch,
                                  capacity=20 * batch, min_after_dequeue=5 * batch,
                                  num_threads=2, seed=2, enqueue_many=True,
                                  allow_smaller_final_batch=True)


def _model(tf, x, y):
    w1 = tf.Variable(tf.random_normal([FEATURES, 64], stddev=0.1, seed=1))
    w2 = tf.Variable(tf.random_normal([64, 1], stddev=0.1, seed=2))
    hidden = tf.nn.relu(tf.matmul(x, w1))
    logits = tf.reshape(tf.matmul(hidden, w2), [-1])
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.cast(y, tf.float32), logits=logits))
    return tf.train.GradientDescentOptimizer(0.1).minimize(loss)


def _drain(tf, sess, fetch, count_of) -> tuple:
    """Runs `fetch` until the input ends; returns (items, seconds)."""
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    items = 0
    start = time.perf_counter()
    try:
        while True:
            items += count_of(sess.run(fetch))
    except tf.errors.OutOfRangeError:
        pass
    elapsed = time.perf_counter() - start
    coord.request_stop()
    coord.join(threads)
    return items, elapsed


CIFAR_RECORD = 1 + 32 * 32 * 3


def write_cifar_records(directory: str, count: int) -> str:
    """`count` random records in the CIFAR-10 binary format; returns the file's path."""
    rng = np.random.default_rng(0)
    records = rng.integers(0, 256, (count, CIFAR_RECORD), dtype=np.uint8)
    records[:, 0] %= 10
    path = os.path.join(directory, "cifar_batch.bin")
    records.tofile(path)
    return path


def cifar_pipeline(tf, path, batch, threads, min_after_dequeue):
    """The tutorial's distorted training input, written out with TF1 calls."""
    filenames = tf.train.string_input_producer([path])
    reader = tf.FixedLengthRecordReader(record_bytes=CIFAR_RECORD)
    _, value = reader.read(filenames)
    record = tf.decode_raw(value, tf.uint8)
    label = tf.cast(tf.strided_slice(record, [0], [1]), tf.int32)
    pixels = tf.reshape(tf.strided_slice(record, [1], [CIFAR_RECORD]), [3, 32, 32])
    image = tf.cast(tf.transpose(pixels, [1, 2, 0]), tf.float32)
    image = tf.random_crop(image, [24, 24, 3])
    image = tf.image.random_flip_left_right(image)
    image = tf.image.random_brightness(image, max_delta=63)
    image = tf.image.random_contrast(image, lower=0.2, upper=1.8)
    image = tf.image.per_image_standardization(image)
    image.set_shape([24, 24, 3])
    label.set_shape([1])
    return tf.train.shuffle_batch([image, label], batch_size=batch, num_threads=threads,
                                  capacity=min_after_dequeue + 3 * batch,
                                  min_after_dequeue=min_after_dequeue)


def run_cifar(tf, path, batch: int, threads: int, batches: int) -> dict:
    """Images per second of the CIFAR-10 input, and process CPU seconds per batch."""
    min_after_dequeue = 20 * batch
    with tf.Graph().as_default():
        images, labels = cifar_pipeline(tf, path, batch, threads, min_after_dequeue)
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            runners = tf.train.start_queue_runners(sess=sess, coord=coord)
            sess.run([images, labels])  # blocks until min_after_dequeue images are in
            cpu, start = time.process_time(), time.perf_counter()
            for _ in range(batches):
                sess.run([images, labels])
            elapsed = time.perf_counter() - start
            cpu = time.process_time() - cpu
            coord.request_stop()
            coord.join(runners, stop_grace_period_secs=5)
    return {f"CIFAR-10 distorted input, {threads} threads (images/s)": batches * batch / elapsed,
            "CIFAR-10 distorted input, ms per batch of "
            f"{batch}": elapsed / batches * 1e3,
            "CIFAR-10 distorted input, CPU ms per batch": cpu / batches * 1e3}


def run_cases(tf, paths, xs, ys, batch: int) -> dict:
    results = {}
    for label, build in (("per-record pipeline (records/s)", per_record_pipeline),
                         ("batched pipeline (records/s)", batched_pipeline)):
        with tf.Graph().as_default():
            x, y = build(tf, paths, batch)
            with tf.Session() as sess:
                sess.run(tf.local_variables_initializer())
                items, seconds = _drain(tf, sess, [x, y], lambda out: len(out[1]))
            assert items == len(ys), (label, items)
            results[label] = items / seconds
    with tf.Graph().as_default():
        x, y = batched_pipeline(tf, paths, batch)
        train = _model(tf, x, y)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            steps, seconds = _drain(tf, sess, train, lambda _: 1)
        results["training fed by a TFRecord queue (examples/s)"] = len(ys) / seconds
    with tf.Graph().as_default():
        batches = len(ys) // batch
        index = tf.train.range_input_producer(batches, num_epochs=1, seed=3).dequeue()
        x_all, y_all = tf.constant(xs[:batches * batch]), tf.constant(ys[:batches * batch])
        x, y = tf.train.batch([x_all[index * batch:(index + 1) * batch],
                               y_all[index * batch:(index + 1) * batch]], batch_size=batch,
                              capacity=8 * batch, num_threads=2, enqueue_many=True)
        train = _model(tf, x, y)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            steps, seconds = _drain(tf, sess, train, lambda _: 1)
        results["training fed by a queue of arrays (examples/s)"] = steps * batch / seconds
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, FEATURES])
        y = tf.placeholder(tf.int64, [None])
        train = _model(tf, x, y)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            order = np.random.RandomState(3).permutation(len(ys))
            start = time.perf_counter()
            for lo in range(0, len(ys), batch):
                rows = order[lo:lo + batch]
                sess.run(train, {x: xs[rows], y: ys[rows]})
            results["training fed by feed_dict (examples/s)"] = \
                len(ys) / (time.perf_counter() - start)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=20000)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--cifar-threads", type=int, default=16)
    parser.add_argument("--cifar-batches", type=int, default=30)
    parser.add_argument("--only-cifar", action="store_true", help="skip the TFRecord cases")
    args = parser.parse_args()
    import tensorflux

    frameworks = {"tensorflux": tensorflux}
    try:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow.compat.v1 as tf1

        tf1.disable_v2_behavior()
        tf1.logging.set_verbosity(tf1.logging.ERROR)
        frameworks["tensorflow (tf.compat.v1)"] = tf1
    except ImportError:
        pass
    columns = {name: {} for name in frameworks}
    directory = tempfile.mkdtemp(prefix="tfx-bench-")
    try:
        cifar = write_cifar_records(directory, 10000)
        if not args.only_cifar:
            paths, xs, ys = write_records(tensorflux, directory, args.records)
        for name, tf in frameworks.items():
            if not args.only_cifar:
                columns[name].update(run_cases(tf, paths, xs, ys, args.batch))
            columns[name].update(run_cifar(tf, cifar, args.batch, args.cifar_threads,
                                           args.cifar_batches))
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    rows = list(columns["tensorflux"])
    names = list(columns)
    width = max(len(r) for r in rows) + 2
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"{args.records} records, batch {args.batch}; load average {load} at the end")
    print("case".ljust(width) + "".join(n.rjust(28) for n in names))
    for row in rows:
        print(row.ljust(width) + "".join(f"{columns[n][row]:.0f}".rjust(28) for n in names))
    for name, result in columns.items():
        if args.only_cifar:
            continue
        queue = result["training fed by a queue of arrays (examples/s)"]
        feed = result["training fed by feed_dict (examples/s)"]
        winner = "the queue" if queue > feed else "feed_dict"
        print(f"{name}: from the same in-memory arrays, {winner} wins ({queue:.0f} examples/s "
              f"through a queue vs {feed:.0f} with feed_dict); from TFRecord files the queue "
              f"pipeline feeds {result['training fed by a TFRecord queue (examples/s)']:.0f} "
              "examples/s")


if __name__ == "__main__":
    main()
