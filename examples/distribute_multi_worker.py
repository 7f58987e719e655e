"""Synchronous training over worker processes with MultiWorkerMirroredStrategy and an
Estimator, as TF 1.15 programs wrote it: every worker runs this same program with its own
TF_CONFIG (a cluster of workers, no ps); each reads its own shard of the data, gradients are
all-reduced across workers every step, and worker 0 (the chief) writes the checkpoints.

    # one process per worker, as a cluster manager would start them:
    TF_CONFIG='{"cluster": {"worker": ["localhost:2222", "localhost:2223"]},
                "task": {"type": "worker", "index": 0}}' python examples/distribute_multi_worker.py
    # or start a loopback cluster of N workers from here, then evaluate the chief's model:
    python examples/distribute_multi_worker.py --launch 2 --model_dir /tmp/mwms
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile

import numpy as np

import tensorflux as tf

BATCH = 32


def make_data(n=1024, seed=0):
    """Two Gaussian blobs in 8 dimensions, labels 0/1."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 2, n)
    centers = np.where(labels[:, None] == 1, 1.0, -1.0)
    features = (centers + rng.normal(0, 1.0, (n, 8))).astype(np.float32)
    return features, labels.astype(np.int64)


def model_fn(features, labels, mode):
    logits = tf.layers.dense(features, 2)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=tf.argmax(logits, 1))
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == tf.estimator.ModeKeys.EVAL:
        accuracy = tf.metrics.accuracy(labels, tf.argmax(logits, 1))
        return tf.estimator.EstimatorSpec(mode, loss=loss,
                                          eval_metric_ops={"accuracy": accuracy})
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def train_input_fn(input_context=None):
    features, labels = make_data()
    dataset = tf.data.Dataset.from_tensor_slices((features, labels))
    if input_context is not None:  # each worker reads its own shard
        dataset = dataset.shard(input_context.num_input_pipelines,
                                input_context.input_pipeline_id)
    return dataset.repeat().batch(BATCH)


def eval_input_fn():
    features, labels = make_data(seed=1)
    return tf.data.Dataset.from_tensor_slices((features, labels)).batch(256)


def run_worker(model_dir: str, steps: int) -> None:
    """This process's task of the TF_CONFIG cluster: train_and_evaluate."""
    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
    config = tf.estimator.RunConfig(model_dir=model_dir, train_distribute=strategy,
                                    save_checkpoints_steps=steps, log_step_count_steps=0)
    estimator = tf.estimator.Estimator(model_fn, config=config)
    tf.estimator.train_and_evaluate(
        estimator, tf.estimator.TrainSpec(train_input_fn, max_steps=steps),
        tf.estimator.EvalSpec(eval_input_fn))
    print(f"worker {config.task_id} done (chief: {config.is_chief})", flush=True)


def launch(workers: int, model_dir: str, steps: int) -> dict:
    """Starts `workers` processes of this program on loopback; returns the chief's model's
    evaluation (run here, without a cluster)."""
    ports = []
    for _ in range(workers):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            ports.append(sock.getsockname()[1])
    cluster = {"worker": [f"localhost:{p}" for p in ports]}
    procs = []
    for index in range(workers):
        env = dict(os.environ, TF_CONFIG=json.dumps(
            {"cluster": cluster, "task": {"type": "worker", "index": index}}))
        procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__),
                                       "--model_dir", model_dir, "--steps", str(steps)],
                                      env=env))
    codes = [p.wait(timeout=300) for p in procs]
    if any(codes):
        raise RuntimeError(f"worker exit codes: {codes}")
    estimator = tf.estimator.Estimator(model_fn, model_dir=model_dir)
    return estimator.evaluate(eval_input_fn)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--launch", type=int, default=0,
                        help="start this many worker processes on loopback")
    parser.add_argument("--model_dir", default=None)
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="mwms_")
    if args.launch:
        result = launch(args.launch, model_dir, args.steps)
        print(f"chief's model: accuracy {result['accuracy']:.4f} at step "
              f"{result['global_step']}")
    else:
        run_worker(model_dir, args.steps)


if __name__ == "__main__":
    main()
