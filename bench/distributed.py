"""The paper's Figure 6 on loopback: null-step time with one PS and 1, 2, 4 workers.

Every case is between-graph replication: a parameter-server task (its own process) holds the
variables, and each worker task is a process running a server *and* its own client loop
against that server (`tf.Session(server.target)`), timing its own steps while the other
workers run theirs concurrently. A step reads a PS tensor into the worker task (an Identity on
the worker device, so the value crosses tasks the way a training step pulls its parameters):

  scalar    a float32 scalar variable;
  dense     a 25M float32 variable (100 MB) per worker per step (GB/s is per worker);
  sparse    32 random rows of a 1M x 64 float32 embedding (tf.gather on the PS; the ids are
            fed each step), and the same from a 10K x 64 embedding: the two times should be
            equal, since only the requested rows cross.

`--fetch direct` fetches the PS tensor itself instead (it returns through RunGraph rather than
RecvTensor). The tensorflux PS runs `tensorflux server` (the CLI); TensorFlow's gRPC runtime
runs the same cases side by side when it is importable in this interpreter (run the bench with
/opt/tfref/bin/python, where tensorflux is installed too).

    python bench/distributed.py [--workers 1,2,4] [--cases scalar,dense,sparse,sparse10k]
                                [--backends tensorflux,tensorflow] [--seconds 4] [--rounds 1]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import queue
import socket
import statistics
import subprocess
import sys
import threading
import time

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CASES = {
    # name: (warmup steps, most timed steps)
    "scalar": (30, 400),
    "dense": (2, 12),
    "sparse": (30, 400),
    "sparse10k": (30, 400),
}
DENSE_ELEMENTS = 25_000_000
EMBEDDING_ROWS = {"sparse": 1_000_000, "sparse10k": 10_000}
EMBEDDING_DIM = 64
BATCH_ROWS = 32
MARK = "@@"


def _import(backend: str):
    if backend == "tensorflow":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow.compat.v1 as tf

        tf.logging.set_verbosity(tf.logging.ERROR)
        tf.disable_v2_behavior()
        return tf
    sys.path.insert(0, REPO)
    import tensorflux as tf

    return tf


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- the task processes --------------------------------------------------------------------


def run_ps(backend: str, cluster: dict) -> None:
    tf = _import(backend)
    server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="ps", task_index=0)
    print(f"{MARK} serving", flush=True)
    server.join()


def build_cases(tf, task: int, cases: list, direct: bool) -> tuple:
    """The variables (on the PS, same names in every worker's graph) and each case's fetch."""
    ps, worker = "/job:ps/task:0", f"/job:worker/task:{task}"
    reads, variables, ids = {}, [], None
    with tf.device(worker):
        if any(c in EMBEDDING_ROWS for c in cases):
            ids = tf.placeholder(tf.int32, [BATCH_ROWS], name="ids")
    with tf.device(ps):
        if "scalar" in cases:
            variables.append(tf.Variable(1.0, name="scalar"))
            reads["scalar"] = variables[-1].value()
        if "dense" in cases:
            variables.append(tf.Variable(tf.fill([DENSE_ELEMENTS], 1.0), name="dense"))
            reads["dense"] = variables[-1].value()
        for case, rows in EMBEDDING_ROWS.items():
            if case in cases:
                init = tf.random_uniform([rows, EMBEDDING_DIM], seed=1)
                variables.append(tf.Variable(init, name=f"embedding_{case}"))
                reads[case] = tf.gather(variables[-1], ids)
    fetches = {}
    for case, read in reads.items():
        if direct:
            fetches[case] = read
        else:
            with tf.device(worker):
                fetches[case] = tf.identity(read, name=f"{case}_on_worker")
    return fetches, variables, ids


def run_worker(backend: str, cluster: dict, task: int, cases: list, seconds: float,
               direct: bool) -> None:
    import numpy as np

    tf = _import(backend)
    server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="worker", task_index=task)
    fetches, variables, ids = build_cases(tf, task, cases, direct)
    ready = [tf.is_variable_initialized(v) for v in variables]
    sess = tf.Session(server.target)
    if task == 0:
        sess.run([v.initializer for v in variables])
    while not all(sess.run(ready)):
        time.sleep(0.05)
    rng = np.random.RandomState(task)
    for case in cases:
        fetch = fetches[case]
        rows = EMBEDDING_ROWS.get(case)

        def step(fetch=fetch, rows=rows):
            feed = {ids: rng.randint(0, rows, BATCH_ROWS).astype(np.int32)} if rows else None
            return sess.run(fetch, feed)

        warmup, most = CASES[case]
        value = None
        for _ in range(warmup):
            value = step()
        if case == "dense":
            assert value.shape == (DENSE_ELEMENTS,) and value[-1] == 1.0, value[-5:]
        print(f"{MARK} ready {case}", flush=True)
        sys.stdin.readline()
        times = []
        end = time.perf_counter() + seconds
        while len(times) < most and (len(times) < 5 or time.perf_counter() < end):
            start = time.perf_counter()
            step()
            times.append(time.perf_counter() - start)
        print(f"{MARK} result {case} {json.dumps(times)}", flush=True)
    print(f"{MARK} done", flush=True)
    sys.stdin.readline()
    sess.close()


# -- the driver ----------------------------------------------------------------------------


class _Task:
    """A child process whose marked stdout lines arrive on a queue."""

    def __init__(self, argv, env):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env, text=True, bufsize=1)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            if line.startswith(MARK):
                self.lines.put(line[len(MARK):].strip())
        self.lines.put(None)

    def expect(self, prefix: str, timeout: float = 600.0) -> str:
        line = self.lines.get(timeout=timeout)
        if line is None or not line.startswith(prefix):
            raise RuntimeError(f"task {self.proc.args[-1]}: expected {prefix!r}, got {line!r} "
                               f"(exit code {self.proc.poll()})")
        return line[len(prefix):].strip()

    def tell(self, text: str) -> None:
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


def run_cluster(backend: str, workers: int, cases: list, seconds: float, direct: bool) -> dict:
    """{case: [step seconds of every worker]} for one cluster of 1 PS and `workers` workers."""
    cluster = {"ps": [f"localhost:{_free_port()}"],
               "worker": [f"localhost:{_free_port()}" for _ in range(workers)]}
    spec = json.dumps(cluster)
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TF_CPP_MIN_LOG_LEVEL="3")
    if backend == "tensorflux":
        ps_argv = [sys.executable, "-m", "tensorflux.cli", "server", "--cluster-json", spec,
                   "--job", "ps", "--task", "0"]
    else:
        ps_argv = [sys.executable, __file__, "--role", "ps", "--backend", backend,
                   "--cluster", spec]
    tasks = []
    try:
        ps = subprocess.Popen(ps_argv, stdout=subprocess.DEVNULL, env=env)
        tasks.append(_PsHandle(ps))
        for task in range(workers):
            argv = [sys.executable, __file__, "--role", "worker", "--backend", backend,
                    "--cluster", spec, "--task", str(task), "--cases", ",".join(cases),
                    "--seconds", str(seconds), "--fetch", "direct" if direct else "worker"]
            tasks.append(_Task(argv, env))
        results = {}
        for case in cases:
            for task in tasks[1:]:
                task.expect(f"ready {case}")
            for task in tasks[1:]:
                task.tell("go")
            results[case] = []
            for task in tasks[1:]:
                results[case].extend(json.loads(task.expect(f"result {case}")))
        for task in tasks[1:]:
            task.expect("done")
            task.tell("exit")
        return results
    finally:
        for task in tasks:
            task.kill()


class _PsHandle:
    def __init__(self, proc):
        self.proc = proc

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


def _cell(times, case: str, workers: int) -> str:
    if not times:
        return "-"
    ms = statistics.median(times) * 1e3
    if case != "dense":
        return f"{ms:8.2f} ms"
    gbps = DENSE_ELEMENTS * 4 / (ms / 1e3) / 1e9
    return f"{ms:7.1f} ms {gbps:4.2f} GB/s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--backends", default="tensorflux,tensorflow")
    parser.add_argument("--seconds", type=float, default=4.0,
                        help="timed seconds per case and worker (at least 5 steps)")
    parser.add_argument("--fetch", choices=["worker", "direct"], default="worker")
    parser.add_argument("--rounds", type=int, default=1,
                        help="clusters per system and worker count, alternating systems (a "
                        "shared machine's load varies: more rounds, steadier medians)")
    parser.add_argument("--role", choices=["driver", "ps", "worker"], default="driver")
    parser.add_argument("--backend", default="tensorflux")
    parser.add_argument("--cluster")
    parser.add_argument("--task", type=int, default=0)
    args = parser.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    unknown = set(cases) - set(CASES)
    if unknown:
        raise SystemExit(f"unknown cases {sorted(unknown)}; choose from {list(CASES)}")
    direct = args.fetch == "direct"
    if args.role == "ps":
        run_ps(args.backend, json.loads(args.cluster))
        return
    if args.role == "worker":
        run_worker(args.backend, json.loads(args.cluster), args.task, cases, args.seconds,
                   direct)
        return
    backends = [b for b in args.backends.split(",") if b]
    if "tensorflow" in backends and importlib.util.find_spec("tensorflow") is None:
        print("(TensorFlow is not importable here: tensorflux only)")
        backends.remove("tensorflow")
    counts = [int(w) for w in args.workers.split(",")]
    table: dict = {}
    for workers in counts:  # both systems back to back, so they see the same machine load
        for _ in range(args.rounds):
            for backend in backends:
                started = time.perf_counter()
                results = run_cluster(backend, workers, cases, args.seconds, direct)
                for case, times in results.items():
                    table.setdefault((backend, case, workers), []).extend(times)
                print(f"  {backend}: 1 ps + {workers} workers in "
                      f"{time.perf_counter() - started:.0f}s", file=sys.stderr, flush=True)
    print(f"median null-step time per worker, 1 PS on loopback (fetch: {args.fetch}; "
          f"dense GB/s per worker)")
    header = f"{'case':<10} {'workers':>7}" + "".join(f"  {b:>22}" for b in backends)
    if len(backends) == 2:
        header += f"  {'ratio':>6}"
    print(header)
    for case in cases:
        for workers in counts:
            cells = [table.get((b, case, workers), []) for b in backends]
            row = f"{case:<10} {workers:>7}" + "".join(
                f"  {_cell(t, case, workers):>22}" for t in cells)
            if len(backends) == 2 and cells[0] and cells[1]:
                row += f"  {statistics.median(cells[0]) / statistics.median(cells[1]):6.2f}"
            print(row)


if __name__ == "__main__":
    main()
