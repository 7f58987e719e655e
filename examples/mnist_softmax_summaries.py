"""An MNIST-style classifier with TensorBoard summaries and a Saver, the TF1 tutorial way.

The model is the classic "mnist_with_summaries" two-layer network: name-scoped layers whose
weights, biases and activations get summary histograms, dropout, a cross-entropy loss and an
accuracy scalar. Training summaries go to <log_dir>/train every step, test summaries to
<log_dir>/test every --eval_every steps, and a Saver checkpoints to <log_dir>/model.ckpt.

Data: scikit-learn's 8x8 handwritten digits, or (without scikit-learn, or with
--data synthetic) noisy copies of ten random 8x8 templates.

    python examples/mnist_softmax_summaries.py --steps 500 --log_dir /tmp/digits_logs
    tensorboard --logdir /tmp/digits_logs
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

import tensorflux as tf

PIXELS, CLASSES = 64, 10


def load_data(source: str = "digits", seed: int = 0):
    """(train_x, train_y, test_x, test_y): flat [N, 64] float32 images in [0, 1], int64 labels."""
    rng = np.random.RandomState(seed)
    images = labels = None
    if source == "digits":
        try:
            from sklearn.datasets import load_digits
        except ImportError:
            source = "synthetic"
        else:
            data = load_digits()
            images = (data.data / 16.0).astype(np.float32)
            labels = data.target.astype(np.int64)
    if source == "synthetic":
        templates = rng.rand(CLASSES, PIXELS) > 0.6
        labels = rng.randint(0, CLASSES, 1800).astype(np.int64)
        noise = rng.normal(0, 0.25, (labels.size, PIXELS))
        images = np.clip(templates[labels] * 0.8 + noise, 0, 1).astype(np.float32)
    order = rng.permutation(labels.size)
    split = int(0.8 * labels.size)
    train, test = order[:split], order[split:]
    return images[train], labels[train], images[test], labels[test]


def variable_summaries(var):
    """Mean, standard deviation, extremes and a histogram of a tensor, for TensorBoard."""
    with tf.name_scope("summaries"):
        mean = tf.reduce_mean(var)
        tf.summary.scalar("mean", mean)
        with tf.name_scope("stddev"):
            stddev = tf.sqrt(tf.reduce_mean(tf.square(var - mean)))
        tf.summary.scalar("stddev", stddev)
        tf.summary.scalar("max", tf.reduce_max(var))
        tf.summary.scalar("min", tf.reduce_min(var))
        tf.summary.histogram("histogram", var)


def nn_layer(input_tensor, input_dim, output_dim, layer_name, act=tf.nn.relu):
    """A fully connected layer with summaries of its variables and activations."""
    with tf.name_scope(layer_name):
        with tf.name_scope("weights"):
            weights = tf.Variable(tf.truncated_normal([input_dim, output_dim], stddev=0.1))
            variable_summaries(weights)
        with tf.name_scope("biases"):
            biases = tf.Variable(tf.constant(0.1, shape=[output_dim]))
            variable_summaries(biases)
        with tf.name_scope("Wx_plus_b"):
            preactivate = tf.matmul(input_tensor, weights) + biases
            tf.summary.histogram("pre_activations", preactivate)
        activations = act(preactivate, name="activation")
        tf.summary.histogram("activations", activations)
        return activations


def build_model(hidden_units: int, learning_rate: float):
    with tf.name_scope("input"):
        x = tf.placeholder(tf.float32, [None, PIXELS], name="x-input")
        y_ = tf.placeholder(tf.int64, [None], name="y-input")
    with tf.name_scope("input_reshape"):
        tf.summary.image("input", tf.reshape(x, [-1, 8, 8, 1]), 4)
    hidden = nn_layer(x, PIXELS, hidden_units, "layer1")
    with tf.name_scope("dropout"):
        keep_prob = tf.placeholder(tf.float32)
        tf.summary.scalar("dropout_keep_probability", keep_prob)
        dropped = tf.nn.dropout(hidden, keep_prob)
    logits = nn_layer(dropped, hidden_units, CLASSES, "layer2", act=tf.identity)
    with tf.name_scope("cross_entropy"):
        cross_entropy = tf.losses.sparse_softmax_cross_entropy(labels=y_, logits=logits)
    tf.summary.scalar("cross_entropy", cross_entropy)
    global_step = tf.train.get_or_create_global_step()
    with tf.name_scope("train"):
        train_step = tf.train.AdamOptimizer(learning_rate).minimize(cross_entropy,
                                                                    global_step=global_step)
    with tf.name_scope("accuracy"):
        correct = tf.equal(tf.argmax(logits, 1), y_)
        accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    tf.summary.scalar("accuracy", accuracy)
    return x, y_, keep_prob, cross_entropy, train_step, accuracy, global_step


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600, help="training steps")
    parser.add_argument("--batch_size", type=int, default=100)
    parser.add_argument("--learning_rate", type=float, default=0.003)
    parser.add_argument("--hidden_units", type=int, default=128)
    parser.add_argument("--dropout", type=float, default=0.9, help="keep probability")
    parser.add_argument("--eval_every", type=int, default=50)
    parser.add_argument("--data", choices=["digits", "synthetic"], default="digits")
    parser.add_argument("--log_dir", default=os.path.join(tempfile.gettempdir(),
                                                          "tensorflux_digits_summaries"))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    tf.logging.set_verbosity(tf.logging.INFO)

    train_x, train_y, test_x, test_y = load_data(args.data)
    if tf.gfile.Exists(args.log_dir):
        tf.gfile.DeleteRecursively(args.log_dir)
    tf.gfile.MakeDirs(args.log_dir)
    rng = np.random.RandomState(args.seed)
    losses, test_accuracies = [], []
    with tf.Graph().as_default():
        tf.set_random_seed(args.seed)
        x, y_, keep_prob, loss, train_step, accuracy, global_step = build_model(
            args.hidden_units, args.learning_rate)
        merged = tf.summary.merge_all()
        saver = tf.train.Saver(max_to_keep=2)
        with tf.Session() as sess:
            train_writer = tf.summary.FileWriter(os.path.join(args.log_dir, "train"), sess.graph)
            test_writer = tf.summary.FileWriter(os.path.join(args.log_dir, "test"))
            sess.run(tf.global_variables_initializer())
            for step in range(args.steps):
                if step % args.eval_every == 0:
                    summary, acc = sess.run([merged, accuracy], {x: test_x, y_: test_y,
                                                                 keep_prob: 1.0})
                    test_writer.add_summary(summary, step)
                    test_accuracies.append(float(acc))
                    tf.logging.info("step %d: test accuracy %.4f", step, acc)
                batch = rng.randint(0, len(train_y), args.batch_size)
                summary, _, value = sess.run([merged, train_step, loss],
                                             {x: train_x[batch], y_: train_y[batch],
                                              keep_prob: args.dropout})
                train_writer.add_summary(summary, step)
                losses.append(float(value))
            final = float(sess.run(accuracy, {x: test_x, y_: test_y, keep_prob: 1.0}))
            checkpoint = saver.save(sess, os.path.join(args.log_dir, "model.ckpt"),
                                    global_step=global_step)
            train_writer.close()
            test_writer.close()
    tf.logging.info("final test accuracy %.4f on %d examples; checkpoint %s", final,
                    len(test_y), checkpoint)
    return {"losses": losses, "test_accuracies": test_accuracies, "test_accuracy": final,
            "checkpoint": checkpoint, "log_dir": args.log_dir}


if __name__ == "__main__":
    main()
