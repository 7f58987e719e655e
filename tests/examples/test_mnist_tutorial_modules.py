"""tensorflow.examples.tutorials.mnist (input_data, mnist) as TF 1.x shipped them: the reader
over local idx files, and the tutorial graph trained a few steps on them."""

import gzip
import struct

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.examples.tutorials.mnist import input_data, mnist


def _write_idx(directory, rng, count):
    images = rng.randint(0, 256, (count, 28, 28)).astype(np.uint8)
    labels = rng.randint(0, 10, count).astype(np.uint8)
    for prefix in ("train", "t10k"):
        with gzip.open(directory / f"{prefix}-images-idx3-ubyte.gz", "wb") as f:
            f.write(struct.pack(">IIII", 2051, count, 28, 28) + images.tobytes())
        with gzip.open(directory / f"{prefix}-labels-idx1-ubyte.gz", "wb") as f:
            f.write(struct.pack(">II", 2049, count) + labels.tobytes())
    return images, labels


def test_read_data_sets_and_the_tutorial_graph(tmp_path):
    images, labels = _write_idx(tmp_path, np.random.RandomState(0), 40)
    data = input_data.read_data_sets(str(tmp_path), validation_size=10)
    assert data.train.num_examples == 30 and data.validation.num_examples == 10
    np.testing.assert_allclose(data.test.images[0], images[0].ravel() / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(data.test.labels, labels)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, mnist.IMAGE_PIXELS])
        y = tf.placeholder(tf.int32, [None])
        logits = mnist.inference(x, 16, 8)
        loss = mnist.loss(logits, y)
        train = mnist.training(loss, 0.1)
        correct = mnist.evaluation(logits, y)
        names = sorted(v.op.name for v in tf.trainable_variables())
        assert names == sorted(f"{s}/{w}" for s in ("hidden1", "hidden2", "softmax_linear")
                               for w in ("weights", "biases"))
        assert tf.get_collection(tf.GraphKeys.SUMMARIES)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            feed = {x: data.test.images, y: data.test.labels}
            first = sess.run(loss, feed)
            for _ in range(20):
                sess.run(train, feed)
            last, count, out = sess.run([loss, correct, logits], feed)
    assert last < first
    assert count == int((out.argmax(axis=1) == data.test.labels).sum())


def test_missing_files_are_named_not_downloaded(tmp_path):
    with pytest.raises(FileNotFoundError, match="never downloads"):
        input_data.read_data_sets(str(tmp_path / "nowhere"))
