"""Synchronous data-parallel training with tf.distribute.MirroredStrategy, as TF 1.14/1.15
programs wrote it: a custom training loop and an Estimator, both over two CPU devices of this
machine (ConfigProto(device_count={"CPU": 2})).

Each replica computes the gradients of its half of every global batch; the strategy sums them
and applies the same update to both copies of every variable, so the model trains exactly as on
one device with the whole batch.

    python examples/distribute_mirrored.py [--steps 200]
"""

from __future__ import annotations

import argparse
import tempfile

import numpy as np

import tensorflux as tf

DEVICES = ["/cpu:0", "/cpu:1"]
CONFIG = tf.ConfigProto(device_count={"CPU": 2})


def make_data(n=512, seed=0):
    """Two Gaussian blobs in 8 dimensions, labels 0/1."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 2, n)
    centers = np.where(labels[:, None] == 1, 1.0, -1.0)
    features = (centers + rng.normal(0, 1.0, (n, 8))).astype(np.float32)
    return features, labels.astype(np.int64)


def custom_loop(steps: int) -> dict:
    """experimental_distribute_dataset + experimental_run_v2 + reduce, in a Session."""
    features, labels = make_data()
    strategy = tf.distribute.MirroredStrategy(DEVICES)
    with tf.Graph().as_default():
        with strategy.scope():
            dataset = tf.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(64)
            iterator = strategy.experimental_distribute_dataset(
                dataset).make_initializable_iterator()
            dense = tf.layers.Dense(2)
            optimizer = tf.train.AdamOptimizer(0.05)
            global_step = tf.train.get_or_create_global_step()

            def train_step(batch):
                x, y = batch
                loss = tf.losses.sparse_softmax_cross_entropy(y, dense(x))
                train = optimizer.minimize(loss, global_step=global_step)
                with tf.control_dependencies([train]):
                    return tf.identity(loss)

            per_replica = strategy.experimental_run_v2(train_step, args=(iterator.get_next(),))
            loss = strategy.reduce(tf.distribute.ReduceOp.MEAN, per_replica)
        with tf.Session(config=CONFIG) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(iterator.initialize())
            losses = [sess.run(loss) for _ in range(steps)]
            kernels = [sess.run(k) for k in strategy.experimental_local_results(dense.kernel)]
            logits = features @ kernels[0] + sess.run(dense.bias)
    accuracy = float(np.mean(np.argmax(logits, 1) == labels))
    return {"first_loss": float(losses[0]), "last_loss": float(np.mean(losses[-10:])),
            "copies_equal": bool(np.array_equal(kernels[0], kernels[1])),
            "accuracy": accuracy, "replicas": strategy.num_replicas_in_sync}


def model_fn(features, labels, mode):
    logits = tf.layers.dense(tf.layers.dense(features["x"], 16, tf.nn.relu), 2)
    predictions = tf.argmax(logits, 1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"class": predictions})
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op,
        eval_metric_ops={"accuracy": tf.metrics.accuracy(labels, predictions)})


def estimator(steps: int, model_dir: str) -> dict:
    """RunConfig(train_distribute=..., eval_distribute=...): input_fn batches are per replica."""
    features, labels = make_data()

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": features}, labels)).repeat().batch(32)

    strategy = tf.distribute.MirroredStrategy(DEVICES)
    config = tf.estimator.RunConfig(train_distribute=strategy, eval_distribute=strategy,
                                    session_config=CONFIG, tf_random_seed=1)
    classifier = tf.estimator.Estimator(model_fn, model_dir=model_dir, config=config)
    classifier.train(input_fn, steps=steps)
    return classifier.evaluate(input_fn, steps=8)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--model_dir", default=None)
    args = parser.parse_args(argv)
    tf.logging.set_verbosity(tf.logging.ERROR)
    loop = custom_loop(args.steps)
    print(f"custom loop over {loop['replicas']} replicas: loss {loop['first_loss']:.3f} -> "
          f"{loop['last_loss']:.3f}, accuracy {loop['accuracy']:.3f}, "
          f"copies equal: {loop['copies_equal']}")
    metrics = estimator(args.steps, args.model_dir or tempfile.mkdtemp())
    print(f"estimator: accuracy {metrics['accuracy']:.3f}, loss {metrics['loss']:.3f}, "
          f"global step {metrics['global_step']}")
    assert loop["copies_equal"] and loop["last_loss"] < loop["first_loss"]
    assert loop["accuracy"] > 0.9 and metrics["accuracy"] > 0.9
    return {"loop": loop, "estimator": metrics}


if __name__ == "__main__":
    main()
