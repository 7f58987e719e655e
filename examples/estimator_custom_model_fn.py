"""A custom-model_fn Estimator trained with tf.estimator.train_and_evaluate, unchanged TF 1.x
code that runs locally or as one task of a cluster described by TF_CONFIG.

The model is a linear regression of y = x . [1.5, -2, 0.5, 3] + 0.7 written as a model_fn
(get_variable, GradientDescentOptimizer, tf.metrics). train_and_evaluate trains it,
evaluates every checkpoint and exports the latest SavedModel.

    python examples/estimator_custom_model_fn.py --model_dir /tmp/linear_est

On a cluster (Kubeflow TFJob, or by hand) every process runs the same command with its own
TF_CONFIG, e.g. for the first worker:

    TF_CONFIG='{"cluster": {"chief": ["h0:2222"], "worker": ["h1:2222"], "ps": ["h2:2222"]},
                "task": {"type": "worker", "index": 0}}' \\
        python examples/estimator_custom_model_fn.py --model_dir /shared/linear_est

The chief and workers train (variables on the ps tasks), the ps tasks serve until the cluster
manager stops them, the "evaluator" task evaluates each new checkpoint. Each process prints
its results and checks them.
"""

from __future__ import annotations

import argparse
import glob
import os
import tempfile

import numpy as np

import tensorflux as tf

TRUE_W = np.array([1.5, -2.0, 0.5, 3.0], np.float32)
TRUE_B = 0.7


def make_data(n, seed):
    x = np.random.RandomState(seed).uniform(-1, 1, (n, 4)).astype(np.float32)
    return x, (x @ TRUE_W + TRUE_B).reshape(-1, 1).astype(np.float32)


def model_fn(features, labels, mode, params):
    """A linear model: predictions, loss, train_op and metrics for each mode."""
    w = tf.get_variable("w", [4, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    y = tf.matmul(features["x"], w) + b
    predictions = {"y": y}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(
            mode, predictions=predictions,
            export_outputs={"serving_default": tf.estimator.export.PredictOutput(predictions)})
    loss = tf.losses.mean_squared_error(labels, y)
    optimizer = tf.train.GradientDescentOptimizer(params["learning_rate"])
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    metrics = {"rmse": tf.metrics.root_mean_squared_error(labels, y),
               "mae": tf.metrics.mean_absolute_error(labels, y)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      eval_metric_ops=metrics)


class CountSteps(tf.estimator.SessionRunHook):
    """Counts the training steps this process runs."""

    def __init__(self):
        self.steps = 0

    def after_run(self, run_context, run_values):
        self.steps += 1


def eval_events(model_dir):
    """The (step, {tag: value}) evaluation summaries written into model_dir/eval."""
    results = []
    for path in sorted(glob.glob(os.path.join(model_dir, "eval", "*tfevents*"))):
        for event in tf.train.summary_iterator(path):
            if event.HasField("summary"):
                results.append((event.step, {v.tag: v.simple_value
                                             for v in event.summary.value}))
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model_dir", default=None)
    parser.add_argument("--max_steps", type=int, default=300)
    parser.add_argument("--learning_rate", type=float, default=0.2)
    args = parser.parse_args(argv)
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="custom_est_")

    x_train, y_train = make_data(512, seed=0)
    x_eval, y_eval = make_data(128, seed=1)
    # In a cluster, non-chief workers wait (task index + 1) x 5 s before training (TF's
    # default); this small model needs no more than a second.
    config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=100,
                                    save_summary_steps=50, log_step_count_steps=100,
                                    experimental_max_worker_delay_secs=1)
    estimator = tf.estimator.Estimator(model_fn, config=config,
                                       params={"learning_rate": args.learning_rate})
    train_input = tf.estimator.inputs.numpy_input_fn(
        {"x": x_train}, y_train, batch_size=32, num_epochs=None, shuffle=True)
    eval_input = tf.estimator.inputs.numpy_input_fn(
        {"x": x_eval}, y_eval, batch_size=64, num_epochs=1, shuffle=False)
    serving_fn = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 4])})
    counter = CountSteps()
    train_spec = tf.estimator.TrainSpec(train_input, max_steps=args.max_steps, hooks=[counter])
    eval_spec = tf.estimator.EvalSpec(
        eval_input, steps=None, start_delay_secs=0, throttle_secs=1,
        exporters=tf.estimator.LatestExporter("linear", serving_fn, exports_to_keep=2))
    outcome = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)

    task = estimator.config.task_type
    print(f"task {task}:{estimator.config.task_id} done, ran {counter.steps} training steps",
          flush=True)
    result = {"task": task, "model_dir": model_dir, "steps": counter.steps}
    if task in (None, "worker", "chief", "master") and outcome is not None:
        metrics, exports = outcome
        print("final evaluation:", {k: float(v) for k, v in metrics.items()})
        result.update(metrics=metrics, exports=exports)
        assert metrics["loss"] < 1e-3 and metrics["global_step"] >= args.max_steps
        export_dir = exports[0].decode()
        with tf.Graph().as_default(), tf.Session() as sess:
            meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
            signature = meta.signature_def["serving_default"]
            served = sess.run(signature.outputs["y"].name,
                              {signature.inputs["x"].name: x_eval[:5]})
        print("served predictions:", served.ravel(), "expected:", y_eval[:5].ravel())
        assert np.allclose(served, y_eval[:5], atol=0.05)
        result["served"] = served
    if task == "chief":
        w = estimator.get_variable_value("w").ravel()
        print("learned w:", w, "b:", estimator.get_variable_value("b"))
        assert np.allclose(w, TRUE_W, atol=0.05), w
        result["w"] = w
    if task == "evaluator":
        events = eval_events(model_dir)
        step, last = events[-1]
        print(f"evaluator: {len(events)} evaluations, last at step {step}: {last}")
        assert step >= args.max_steps and last["loss"] < 1e-2
        result["evaluations"] = events
    return result


if __name__ == "__main__":
    main()
