"""Step time of MultiWorkerMirroredStrategy: 1 worker vs N worker processes on loopback.

Each worker trains an MLP (784-256-256-10, per-worker batch --batch) with plain SGD in a
custom graph-mode loop; with N workers the gradients are all-reduced every step (one packed
CollectiveReduce over gRPC). Rounds alternate 1 worker (a local Session, and a Session on its
own server) and N workers, so load changes hit both. Prints per-step wall and CPU
milliseconds (median, min over rounds) of worker 0.

    PYTHONPATH=$PWD python bench/multi_worker.py --workers 2 --steps 50 --rounds 3
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _worker(steps: int, batch: int) -> None:
    import numpy as np

    import tensorflux as tf

    tf_config = json.loads(os.environ["TF_CONFIG"])
    cluster = tf_config["cluster"]
    index = tf_config["task"]["index"]
    if os.environ.get("BENCH_SERVER") != "1":
        del os.environ["TF_CONFIG"]  # no cluster: MirroredStrategy on this machine
    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
    server = tf.train.Server(tf.train.ClusterSpec(cluster), "worker", index) \
        if len(cluster["worker"]) > 1 or os.environ.get("BENCH_SERVER") == "1" else None
    rs = np.random.RandomState(index)
    x_data = rs.rand(batch, 784).astype(np.float32)
    y_data = rs.randint(0, 10, batch).astype(np.int64)
    with tf.Graph().as_default():
        with strategy.scope():
            x = tf.constant(x_data)
            y = tf.constant(y_data)

            def step():
                hidden = tf.layers.dense(x, 256, tf.nn.relu)
                hidden = tf.layers.dense(hidden, 256, tf.nn.relu)
                logits = tf.layers.dense(hidden, 10)
                loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
                return tf.train.GradientDescentOptimizer(0.01).minimize(loss)

            train = strategy.group(strategy.extended.call_for_each_replica(step))
            init = tf.global_variables_initializer()
        config = strategy.update_config_proto(tf.ConfigProto())
        with tf.Session(server.target if server else "", config=config) as sess:
            sess.run(init)
            for _ in range(5):
                sess.run(train)
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(steps):
                sess.run(train)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(json.dumps({"wall_ms": wall / steps * 1e3, "cpu_ms": cpu / steps * 1e3}), flush=True)
    if server is not None:
        time.sleep(0.5)  # the other workers' last pulls
        server.stop()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _run(workers: int, steps: int, batch: int, server: bool = False) -> dict:
    cluster = {"worker": [f"localhost:{_free_port()}" for _ in range(workers)]}
    procs = []
    for i in range(workers):
        env = dict(os.environ, PYTHONPATH=ROOT, BENCH_SERVER="1" if server else "0",
                   TF_CONFIG=json.dumps(
            {"cluster": cluster, "task": {"type": "worker", "index": i}}))
        procs.append(subprocess.Popen([sys.executable, __file__, "--_worker", "--steps",
                                       str(steps), "--batch", str(batch)], env=env,
                                      stdout=subprocess.PIPE))
    outs = [json.loads(p.communicate(timeout=600)[0].decode().strip().splitlines()[-1])
            for p in procs]
    return outs[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--_worker", action="store_true")
    args = parser.parse_args()
    if args._worker:
        _worker(args.steps, args.batch)
        return
    kinds = {"1 (local Session)": (1, False), "1 (Session on its server)": (1, True),
             f"{args.workers} (collective)": (args.workers, True)}
    results = {name: [] for name in kinds}
    for _ in range(args.rounds):
        for name, (n, server) in kinds.items():
            results[name].append(_run(n, args.steps, args.batch, server))
    print(f"uptime: {os.getloadavg()}")
    print("| workers | wall ms/step (median, min) | CPU ms/step (median, min) |")
    print("|---|---|---|")
    for n, runs in results.items():
        wall = [r["wall_ms"] for r in runs]
        cpu = [r["cpu_ms"] for r in runs]
        print(f"| {n} | {statistics.median(wall):.2f}, {min(wall):.2f} | "
              f"{statistics.median(cpu):.2f}, {min(cpu):.2f} |")


if __name__ == "__main__":
    main()
