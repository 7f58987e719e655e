"""A canned tf.estimator.DNNClassifier trained with train_and_evaluate, TF 1.x code unchanged.

The data are two interleaved half-moons (a problem a linear model cannot separate), given
through feature columns: two numeric coordinates plus a bucketized, embedded copy of the
first. train_and_evaluate trains, evaluates each checkpoint and exports the best model as a
SavedModel that parses tf.Example protos; the program then serves the exported model and
checks it predicts what Estimator.predict does.

    python examples/estimator_dnn_classifier.py --model_dir /tmp/moons --max_steps 600
"""

from __future__ import annotations

import argparse
import tempfile

import numpy as np

import tensorflux as tf


def moons(n, seed, noise=0.1):
    """Two interleaved half circles: class 0 on top, class 1 below and shifted."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 2, n)
    angle = rng.uniform(0, np.pi, n)
    x = np.where(labels == 0, np.cos(angle), 1 - np.cos(angle))
    y = np.where(labels == 0, np.sin(angle), 0.5 - np.sin(angle))
    points = np.stack([x, y], 1) + rng.normal(0, noise, (n, 2))
    return {"x": points[:, 0].astype(np.float32), "y": points[:, 1].astype(np.float32)}, \
        labels.astype(np.int64)


def example(features, i):
    return tf.train.Example(features=tf.train.Features(feature={
        key: tf.train.Feature(float_list=tf.train.FloatList(value=[float(values[i])]))
        for key, values in features.items()})).SerializeToString()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model_dir", default=None)
    parser.add_argument("--max_steps", type=int, default=600)
    args = parser.parse_args(argv)
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="dnn_moons_")

    train_x, train_y = moons(1000, seed=0)
    test_x, test_y = moons(400, seed=1)
    x = tf.feature_column.numeric_column("x")
    y = tf.feature_column.numeric_column("y")
    x_buckets = tf.feature_column.embedding_column(
        tf.feature_column.bucketized_column(x, boundaries=[-0.5, 0.0, 0.5, 1.0, 1.5]),
        dimension=3)
    columns = [x, y, x_buckets]
    classifier = tf.estimator.DNNClassifier(
        hidden_units=[16, 16], feature_columns=columns, n_classes=2,
        optimizer=tf.train.AdamOptimizer(0.01),
        config=tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=200,
                                      tf_random_seed=1))
    serving_fn = tf.estimator.export.build_parsing_serving_input_receiver_fn(
        tf.feature_column.make_parse_example_spec(columns))
    train_spec = tf.estimator.TrainSpec(
        tf.estimator.inputs.numpy_input_fn(train_x, train_y, batch_size=64, num_epochs=None,
                                           shuffle=True),
        max_steps=args.max_steps)
    eval_spec = tf.estimator.EvalSpec(
        tf.estimator.inputs.numpy_input_fn(test_x, test_y, batch_size=200, shuffle=False),
        steps=None, throttle_secs=0, start_delay_secs=0,
        exporters=[tf.estimator.FinalExporter("moons", serving_fn)])
    metrics, exports = tf.estimator.train_and_evaluate(classifier, train_spec, eval_spec)
    print("evaluation:", {k: round(float(v), 4) for k, v in sorted(metrics.items())})

    predictions = list(classifier.predict(tf.estimator.inputs.numpy_input_fn(
        {k: v[:8] for k, v in test_x.items()}, shuffle=False)))
    expected = np.stack([p["probabilities"] for p in predictions])
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], exports[0].decode())
        signature = meta.signature_def["serving_default"]
        served = sess.run(signature.outputs["scores"].name,
                          {signature.inputs["inputs"].name: [example(test_x, i)
                                                             for i in range(8)]})
    print("served probabilities (first 3):", served[:3].round(4).tolist())

    assert metrics["accuracy"] > 0.9, metrics
    assert metrics["auc"] > 0.95, metrics
    assert metrics["global_step"] >= args.max_steps
    assert np.allclose(served, expected, atol=1e-5)
    return {"metrics": metrics, "served": served, "expected": expected}


if __name__ == "__main__":
    main()
