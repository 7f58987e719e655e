"""A TF-Slim CNN on scikit-learn's 8x8 digits, written as 2017-era slim code.

arg_scope sets the defaults of conv2d / fully_connected (batch norm as normalizer, L2 weight
decay); the network is conv2d -> max_pool2d -> conv2d -> max_pool2d -> flatten ->
fully_connected; the loss comes from slim.losses and the train op from
slim.learning.create_train_op (which runs the batch-norm updates). Without scikit-learn a
synthetic 10-class problem of 8x8 images stands in.

    python examples/slim_cnn.py --steps 300
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import tensorflux as tf

slim = tf.contrib.slim


def load_data(seed: int = 0, synthetic: bool = False):
    """(train_x, train_y, test_x, test_y, source): 8x8x1 images in [0, 1], an 80/20 split."""
    load_digits = None
    if not synthetic:
        try:
            from sklearn.datasets import load_digits
        except ImportError:
            pass
    rng = np.random.RandomState(seed)
    if load_digits is not None:
        data = load_digits()
        images = (data.images / 16.0).astype(np.float32)[..., None]
        labels = data.target.astype(np.int64)
        source = "sklearn digits"
    else:
        # Ten fixed random 8x8 prototypes plus noise: learnable, not trivial.
        prototypes = rng.rand(10, 8, 8).astype(np.float32)
        labels = rng.randint(0, 10, size=1800).astype(np.int64)
        noise = rng.randn(1800, 8, 8).astype(np.float32) * 0.35
        images = np.clip(prototypes[labels] + noise, 0, 1)[..., None]
        source = "synthetic prototypes"
    order = rng.permutation(len(labels))
    split = int(0.8 * len(labels))
    train, test = order[:split], order[split:]
    return images[train], labels[train], images[test], labels[test], source


def cnn(images, is_training, num_classes=10, weight_decay=1e-4):
    """Logits and end points of a small slim CNN."""
    end_points_collection = "cnn_end_points"
    with slim.arg_scope([slim.conv2d, slim.fully_connected],
                        normalizer_fn=slim.batch_norm,
                        normalizer_params={"is_training": is_training, "decay": 0.9},
                        weights_regularizer=slim.l2_regularizer(weight_decay),
                        outputs_collections=end_points_collection):
        with slim.arg_scope([slim.max_pool2d], padding="SAME",
                            outputs_collections=end_points_collection):
            net = slim.conv2d(images, 16, [3, 3], scope="conv1")
            net = slim.max_pool2d(net, [2, 2], scope="pool1")
            net = slim.conv2d(net, 32, [3, 3], scope="conv2")
            net = slim.max_pool2d(net, [2, 2], scope="pool2")
            net = slim.flatten(net, scope="flatten")
            net = slim.fully_connected(net, 64, scope="fc3")
            net = slim.dropout(net, 0.8, is_training=is_training, scope="dropout3")
            logits = slim.fully_connected(net, num_classes, activation_fn=None,
                                          normalizer_fn=None, scope="logits")
    end_points = slim.utils.convert_collection_to_dict(end_points_collection)
    return logits, end_points


def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--learning_rate", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min_accuracy", type=float, default=0.9)
    parser.add_argument("--synthetic", action="store_true",
                        help="use the synthetic problem even when scikit-learn is installed")
    args = parser.parse_args(argv)

    train_x, train_y, test_x, test_y, source = load_data(args.seed, args.synthetic)
    with tf.Graph().as_default():
        tf.set_random_seed(args.seed)
        images = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
        labels = tf.placeholder(tf.int64, [None], name="labels")
        is_training = tf.placeholder_with_default(False, [], name="is_training")
        logits, end_points = cnn(images, is_training)
        slim.losses.sparse_softmax_cross_entropy(logits, labels)
        total_loss = slim.losses.get_total_loss()
        optimizer = tf.train.MomentumOptimizer(args.learning_rate, 0.9)
        train_op = slim.learning.create_train_op(total_loss, optimizer)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))
        print(f"data: {source}, {len(train_y)} train / {len(test_y)} test; "
              f"end points: {', '.join(end_points)}")
        print(f"{len(slim.get_model_variables())} model variables, e.g. "
              f"{[v.op.name for v in slim.get_variables_by_name('weights')][:2]}")
        rng = np.random.RandomState(args.seed)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(1, args.steps + 1):
                batch = rng.randint(0, len(train_y), size=args.batch_size)
                loss = sess.run(train_op, {images: train_x[batch], labels: train_y[batch],
                                           is_training: True})
                if step % 100 == 0 or step == args.steps:
                    acc = sess.run(accuracy, {images: test_x, labels: test_y})
                    print(f"step {step:4d}  loss {loss:.4f}  test accuracy {acc:.3f}")
            test_accuracy = float(sess.run(accuracy, {images: test_x, labels: test_y}))
    print(f"final test accuracy: {test_accuracy:.3f}")
    if test_accuracy < args.min_accuracy:
        sys.exit(f"check failed: accuracy {test_accuracy:.3f} < {args.min_accuracy}")
    print("check passed")
    return test_accuracy


if __name__ == "__main__":
    main()
