"""The `tensorflux` command: run one server task, or a whole local cluster on loopback.

    tensorflux server --cluster ps=host0:2222 --cluster worker=host1:2222,host2:2222 \\
        --job worker --task 0
    tensorflux cluster --ps 1 --workers 2 -- python train.py

`cluster` starts every task on 127.0.0.1 with free ports, runs the command once per worker
with TF_CONFIG-style environment variables (TFX_CLUSTER as JSON, TFX_JOB_NAME, TFX_TASK_INDEX)
and stops every server when the workers finish (or on Ctrl-C).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys

from tensorflux.runtime import thread_budget


def _parse_cluster(items) -> dict:
    cluster: dict = {}
    for item in items or []:
        job, _, addresses = item.partition("=")
        if not job or not addresses:
            raise SystemExit(f"--cluster expects job=host:port[,host:port...], got {item!r}")
        cluster[job] = addresses.split(",")
    return cluster


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_server(args) -> int:
    import tensorflux as tf

    if args.cluster_json:
        cluster = json.loads(args.cluster_json)
    else:
        cluster = _parse_cluster(args.cluster)
    if not cluster:
        raise SystemExit("tensorflux server needs --cluster (or --cluster-json)")
    try:
        thread_budget.set_process_threads(args.threads)
    except ValueError as err:
        raise SystemExit(f"tensorflux server --threads: {err}")
    config = tf.ConfigProto(device_count={"CPU": args.cpus})
    server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name=args.job,
                             task_index=args.task, config=config)
    print(f"tensorflux server {server.task_name} serving at {server.target}", flush=True)

    def stop(*_):
        server.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.join()
    return 0


def _wait_serving(proc, timeout: float) -> None:
    """Waits for a server process to print its 'serving at' line, then echoes its output."""
    import threading

    ready = threading.Event()

    def pump():
        for line in proc.stdout:
            if "serving at" in line:
                ready.set()
            sys.stdout.write(line)
            sys.stdout.flush()
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    if not ready.wait(timeout) or proc.poll() is not None:
        raise SystemExit(f"a server of the local cluster did not start (exit code "
                         f"{proc.poll()})")


def run_cluster(args) -> int:
    command = args.command[1:] if args.command and args.command[0] == "--" else args.command
    cluster = {"ps": [f"localhost:{_free_port()}" for _ in range(args.ps)],
               "worker": [f"localhost:{_free_port()}" for _ in range(args.workers)]}
    cluster = {job: tasks for job, tasks in cluster.items() if tasks}
    spec = json.dumps(cluster)
    # N tasks on one machine share its cores rather than each assuming all of them.
    threads = dict(zip(("ps", "worker"), thread_budget.share_cores(
        thread_budget.process_cores(), args.ps, args.workers)))
    servers = []
    workers = []

    def terminated(signum, frame):
        raise KeyboardInterrupt

    # NOTE: without this a SIGTERM (a cluster manager, `kill`) would end this process
    # without its `finally`, leaving every server and worker process behind.
    signal.signal(signal.SIGTERM, terminated)
    try:
        for job, tasks in cluster.items():
            for index in range(len(tasks)):
                servers.append(subprocess.Popen(
                    [sys.executable, "-m", "tensorflux.cli", "server", "--cluster-json", spec,
                     "--job", job, "--task", str(index), "--threads", str(threads[job])],
                    stdout=subprocess.PIPE, text=True))
        for proc in servers:
            _wait_serving(proc, timeout=60.0)
        print(f"local cluster: {spec}", flush=True)
        if not command:
            for proc in servers:
                proc.wait()
            return 0
        for index in range(len(cluster.get("worker", []))):
            env = dict(os.environ, TFX_CLUSTER=spec, TFX_JOB_NAME="worker",
                       TFX_TASK_INDEX=str(index))
            workers.append(subprocess.Popen(command, env=env))
        codes = [proc.wait() for proc in workers]
        return max(codes) if codes else 0
    except KeyboardInterrupt:
        return 130
    finally:
        _stop_all(workers + servers)


def _stop_all(procs) -> None:
    """Terminates every process still running (killing those that ignore it) and reaps all."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="tensorflux", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="which", required=True)
    server = commands.add_parser("server", help="run one task of a cluster")
    server.add_argument("--cluster", action="append", help="job=host:port[,host:port...]")
    server.add_argument("--cluster-json", help="the cluster as a JSON object")
    server.add_argument("--job", required=True)
    server.add_argument("--task", type=int, default=0)
    server.add_argument("--cpus", type=int, default=1, help="CPU devices of the task")
    server.add_argument("--threads", type=int, default=None,
                        help="cores of this task's thread budget (default: all it may use)")
    server.set_defaults(run=run_server)
    cluster = commands.add_parser("cluster", help="run a local cluster on loopback")
    cluster.add_argument("--ps", type=int, default=1)
    cluster.add_argument("--workers", type=int, default=2)
    cluster.add_argument("command", nargs=argparse.REMAINDER,
                         help="-- program to run once per worker")
    cluster.set_defaults(run=run_cluster)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
