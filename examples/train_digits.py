"""The main job: train a small convolutional network on scikit-learn's 8x8 handwritten digits.

A plain TF1 program (only the import differs): placeholders, tf.layers, Adam, a global step,
a Saver that checkpoints every epoch, and a tqdm progress bar with loss and throughput. Rerun it
and it resumes from the latest checkpoint in --checkpoint_dir.

    python examples/train_digits.py --epochs 30
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from tqdm import tqdm

import tensorflux as tf


def load_digits(seed: int = 0):
    """(train_x, train_y, test_x, test_y): 8x8x1 images in [0, 1], an 80/20 split."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError:
        sys.exit("This example needs scikit-learn's digits data set: "
                 "pip install 'tensorflux[examples]'")
    data = sklearn_digits()
    images = (data.images / 16.0).astype(np.float32)[..., None]
    labels = data.target.astype(np.int64)
    order = np.random.RandomState(seed).permutation(len(labels))
    split = int(0.8 * len(labels))
    train, test = order[:split], order[split:]
    return images[train], labels[train], images[test], labels[test]


def build_model():
    images = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    training = tf.placeholder_with_default(False, [], name="training")
    net = tf.layers.conv2d(images, 32, 3, padding="same", activation=tf.nn.relu)
    net = tf.layers.conv2d(net, 32, 3, padding="same", activation=tf.nn.relu)
    net = tf.layers.max_pooling2d(net, 2, 2)
    net = tf.layers.conv2d(net, 64, 3, padding="same", activation=tf.nn.relu)
    net = tf.layers.max_pooling2d(net, 2, 2)
    net = tf.layers.flatten(net)
    net = tf.layers.dense(net, 128, activation=tf.nn.relu)
    net = tf.layers.dropout(net, rate=0.3, training=training)
    logits = tf.layers.dense(net, 10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(2e-3).minimize(loss, global_step=global_step)
    correct = tf.equal(tf.argmax(logits, 1), labels)
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    return images, labels, training, loss, train_op, accuracy, global_step


def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--checkpoint_dir", default=os.path.join("checkpoints", "digits"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)

    train_x, train_y, test_x, test_y = load_digits()
    steps_per_epoch = int(np.ceil(len(train_y) / args.batch_size))
    with tf.Graph().as_default():
        tf.set_random_seed(args.seed)
        images, labels, training, loss, train_op, accuracy, global_step = build_model()
        saver = tf.train.Saver(max_to_keep=3)
        os.makedirs(args.checkpoint_dir, exist_ok=True)
        prefix = os.path.join(args.checkpoint_dir, "model.ckpt")
        with tf.Session() as sess:
            latest = tf.train.latest_checkpoint(args.checkpoint_dir)
            if latest:
                saver.restore(sess, latest)
                print(f"Resumed from {latest}")
            else:
                sess.run(tf.global_variables_initializer())
            start_epoch = int(sess.run(global_step)) // steps_per_epoch
            rng = np.random.RandomState(args.seed + start_epoch)
            bar = tqdm(total=args.epochs * steps_per_epoch, initial=start_epoch * steps_per_epoch,
                       unit="step", disable=args.quiet, dynamic_ncols=True)
            for epoch in range(start_epoch, args.epochs):
                order = rng.permutation(len(train_y))
                started = time.perf_counter()
                for k in range(steps_per_epoch):
                    batch = order[k * args.batch_size:(k + 1) * args.batch_size]
                    _, value = sess.run([train_op, loss], {images: train_x[batch],
                                                           labels: train_y[batch],
                                                           training: True})
                    rate = (k + 1) * args.batch_size / (time.perf_counter() - started)
                    bar.set_postfix(epoch=epoch + 1, loss=f"{value:.4f}",
                                    examples_per_s=f"{rate:.0f}")
                    bar.update(1)
                saver.save(sess, prefix, global_step=global_step)
            bar.close()
            test_accuracy = float(sess.run(accuracy, {images: test_x, labels: test_y}))
    print(f"held-out accuracy: {test_accuracy:.4f} on {len(test_y)} digits "
          f"(checkpoints in {args.checkpoint_dir})")
    return test_accuracy


if __name__ == "__main__":
    main()
