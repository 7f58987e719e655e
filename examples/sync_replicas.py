"""Synchronous data-parallel training with a backup worker, as in the paper's section 4.4.

A local cluster on loopback: one parameter server and three workers, each worker a thread
with its own graph and its own `tf.train.Server` (between-graph replication). Every step
averages the gradients of the first two workers to arrive; the third is a backup whose late
gradient is dropped, so a slow worker never holds the others up. Worker 2 is made slow on
purpose to show it. The model is a linear regression on synthetic data.

    python examples/sync_replicas.py [--steps 60] [--slow_ms 20]
"""

from __future__ import annotations

import argparse
import socket
import threading
import time

import numpy as np

import tensorflux as tf

TRUE_W = np.array([[2.0], [-3.0], [0.5]], np.float32)
TRUE_B = 1.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def worker(cluster, task: int, args, results: dict) -> None:
    server = tf.train.Server(cluster, "worker", task)
    rng = np.random.RandomState(task)
    graph = tf.Graph()
    with graph.as_default():
        with tf.device(tf.train.replica_device_setter(
                worker_device=f"/job:worker/task:{task}", cluster=cluster)):
            step = tf.train.get_or_create_global_step()
            x = tf.placeholder(tf.float32, [None, 3])
            y = tf.placeholder(tf.float32, [None, 1])
            w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
            b = tf.get_variable("b", [], initializer=tf.zeros_initializer())
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
            opt = tf.train.SyncReplicasOptimizer(
                tf.train.GradientDescentOptimizer(args.learning_rate),
                replicas_to_aggregate=2, total_num_replicas=3)
            train = opt.minimize(loss, global_step=step)
        hooks = [opt.make_session_run_hook(is_chief=task == 0),
                 tf.train.StopAtStepHook(last_step=args.steps)]
        local_steps = 0
        with tf.train.MonitoredTrainingSession(master=server.target, is_chief=task == 0,
                                               hooks=hooks) as sess:
            while not sess.should_stop():
                if task == 2:
                    time.sleep(args.slow_ms / 1000.0)  # the backup worker lags
                features = rng.rand(32, 3).astype(np.float32)
                labels = features @ TRUE_W + TRUE_B
                _, value = sess.run([train, loss], {x: features, y: labels})
                local_steps += 1
            if task == 0:
                results["w"], results["b"], results["global_step"] = sess.run([w, b, step])
                results["loss"] = float(value)
    results[f"worker{task}_steps"] = local_steps
    server.stop()


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60, help="global steps (updates)")
    parser.add_argument("--slow_ms", type=float, default=20.0)
    parser.add_argument("--learning_rate", type=float, default=0.3)
    args = parser.parse_args(argv)
    cluster = tf.train.ClusterSpec({
        "ps": [f"localhost:{free_port()}"],
        "worker": [f"localhost:{free_port()}" for _ in range(3)]})
    ps = tf.train.Server(cluster, "ps", 0)
    results: dict = {}
    threads = [threading.Thread(target=worker, args=(cluster, task, args, results))
               for task in range(3)]
    start = time.time()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    ps.stop()
    results["seconds"] = time.time() - start
    print(f"{results['global_step']} updates in {results['seconds']:.1f} s; steps run by "
          f"workers 0/1/2 (2 is the slow backup): {results['worker0_steps']}/"
          f"{results['worker1_steps']}/{results['worker2_steps']}")
    print(f"w = {results['w'].ravel().round(3)} (true {TRUE_W.ravel()}), "
          f"b = {results['b']:.3f} (true {TRUE_B}), last loss {results['loss']:.5f}")
    return results


if __name__ == "__main__":
    main()
