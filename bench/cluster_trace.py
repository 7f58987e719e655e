"""Per-step trace of the local-cluster training step (1 PS + 2 workers, mnist_replica shape).

Each task is its own process (as `bench/training.py --cluster` runs them): the PS serves, each
worker is a server and its own client. Every process counts the worker-service RPCs its
server answers (by method) and its CPU time; the workers report wall and CPU ms per timed
step, the PS its CPU per step of the cluster (its CPU over the timed window / the steps all
workers ran in it). With `--backend tensorflow` the same cluster runs on TensorFlow's gRPC
runtime (times and CPU only).

    python bench/cluster_trace.py [--steps 50] [--rounds 1] [--backend tensorflux,tensorflow]

A backend written `tensorflux+NAME=VALUE` runs its tasks with that environment setting, so
`--backend tensorflux+X=0,tensorflux+X=1` compares two paths round by round.

Each process also counts its threads' voluntary context switches per step (wake-ups);
TRACE_WAKEUPS=1 prints them by thread name on stderr.

TRACE_THREADS=N pins each tensorflux task's thread budget to N cores (as `tensorflux cluster`
does with `--threads`), to compare with each task sizing itself from its affinity.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

import numpy as np

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
MARK = "@@"
COUNTS: collections.Counter = collections.Counter()
_COUNT_LOCK = threading.Lock()


def _tf(backend: str):
    if backend == "tensorflow":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
        import tensorflow.compat.v1 as tf1

        tf1.disable_v2_behavior()
        tf1.logging.set_verbosity(tf1.logging.ERROR)
        return tf1
    sys.path.insert(0, REPO)
    from tensorflux.distributed.rpc import server_pools

    lane_for = server_pools.lane_for

    def counting_lane_for(name, behaviour):
        def counted(request, context):
            with _COUNT_LOCK:
                COUNTS[name] += 1
            return behaviour(request, context)

        return lane_for(name, counted)

    server_pools.lane_for = counting_lane_for
    import tensorflux as tf

    if os.environ.get("TRACE_THREADS"):
        from tensorflux.runtime import thread_budget

        thread_budget.set_process_threads(int(os.environ["TRACE_THREADS"]))

    return tf


def _cpu_of(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _threads_of(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def _switches_by_thread(pid: int) -> dict:
    """Voluntary context switches (a thread blocking: each wake-up) of the live threads, by
    thread name (the names of this process's Python threads; `pid` must be this process)."""
    names = {t.native_id: t.name.split("_")[0].rstrip("0123456789-") for t in threading.enumerate()}
    found: collections.Counter = collections.Counter()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as status:
                for line in status:
                    if line.startswith("voluntary_ctxt_switches"):
                        found[names.get(int(tid), "native")] += int(line.split()[1])
        except OSError:
            pass
    return found


def _switches_of(pid: int) -> int:
    return sum(_switches_by_thread(pid).values())


def ps_main(backend: str) -> None:
    tf = _tf(backend)
    server = tf.train.Server(tf.train.ClusterSpec(json.loads(os.environ["TFX_CLUSTER"])),
                             job_name="ps", task_index=0)
    print(f"{MARK} serving", flush=True)
    marked: dict = {}
    for line in sys.stdin:  # "mark" / "report"
        if line.strip() == "mark":
            with _COUNT_LOCK:
                COUNTS.clear()
            marked = _switches_by_thread(os.getpid())
            print(f"{MARK} cpu {time.process_time()} {_switches_of(os.getpid())}", flush=True)
        else:
            with _COUNT_LOCK:
                counts = dict(COUNTS)
            if os.environ.get("TRACE_WAKEUPS"):
                now = _switches_by_thread(os.getpid())
                print("ps wake-ups by thread (total):",
                      {k: v - marked.get(k, 0) for k, v in now.items()}, file=sys.stderr)
            print(f"{MARK} report {time.process_time()} {_threads_of(os.getpid())} "
                  f"{_switches_of(os.getpid())} "
                  f"{json.dumps(counts)}", flush=True)
    del server


def worker_main(backend: str, steps: int) -> None:
    tf = _tf(backend)
    cluster = json.loads(os.environ["TFX_CLUSTER"])
    task = int(os.environ["TFX_TASK_INDEX"])
    server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="worker", task_index=task)
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(task)
        with tf.device(tf.train.replica_device_setter(
                worker_device=f"/job:worker/task:{task}", cluster=cluster)):
            x = tf.placeholder(tf.float32, [100, 784])
            y = tf.placeholder(tf.int64, [100])
            h = tf.layers.dense(x, 100, activation=tf.nn.relu)
            logits = tf.layers.dense(h, 10)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=y, logits=logits))
            step = tf.train.get_or_create_global_step()
            train = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=step)
        init = tf.global_variables_initializer()
    rng = np.random.RandomState(task)
    feed = {x: rng.rand(100, 784).astype(np.float32), y: rng.randint(0, 10, 100)}
    with tf.Session(server.target, graph=graph) as sess:
        if task == 0:
            sess.run(init)
        else:
            while True:
                try:
                    sess.run(step)
                    break
                except tf.errors.FailedPreconditionError:
                    time.sleep(0.05)
        for _ in range(5):
            sess.run(train, feed)
        print(f"{MARK} ready", flush=True)
        sys.stdin.readline()  # every worker warmed up: go
        with _COUNT_LOCK:
            COUNTS.clear()
        walls = []
        cpu0 = time.process_time()
        switches0 = _switches_by_thread(os.getpid())
        for _ in range(steps):
            start = time.perf_counter()
            sess.run(train, feed)
            walls.append(time.perf_counter() - start)
        cpu = time.process_time() - cpu0
        switches1 = _switches_by_thread(os.getpid())
        switches = sum(switches1.values()) - sum(switches0.values())
        if os.environ.get("TRACE_WAKEUPS"):
            print("wake-ups/step by thread:", {k: round((v - switches0.get(k, 0)) / steps, 1)
                                               for k, v in switches1.items()}, file=sys.stderr)
        switches /= steps
        with _COUNT_LOCK:
            counts = dict(COUNTS)
        print(f"{MARK} done {statistics.median(walls)} {min(walls)} {cpu / steps} "
              f"{_threads_of(os.getpid())} {switches} {json.dumps(counts)}", flush=True)
        sys.stdin.readline()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _expect(proc, word):
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"task ended before '{word}'")
        if line.startswith(f"{MARK} {word}"):
            return line.split()[2:]


def run(variant: str, steps: int) -> dict:
    # "tensorflux+NAME=VALUE+..." runs the backend with those environment settings (A/B).
    backend, *settings = variant.split("+")
    cluster = {"ps": [f"localhost:{_free_port()}"],
               "worker": [f"localhost:{_free_port()}" for _ in range(2)]}
    env = dict(os.environ, TFX_CLUSTER=json.dumps(cluster), TF_CPP_MIN_LOG_LEVEL="3")
    env.update(setting.split("=", 1) for setting in settings)
    script = os.path.abspath(__file__)
    popen = dict(env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ps = subprocess.Popen([sys.executable, script, "--role", "ps", "--backend", backend],
                          **popen)
    workers = []
    try:
        _expect(ps, "serving")
        workers = [subprocess.Popen(
            [sys.executable, script, "--role", "worker", "--backend", backend, "--steps",
             str(steps)], **dict(popen, env=dict(env, TFX_TASK_INDEX=str(t))))
            for t in range(2)]
        for w in workers:
            _expect(w, "ready")
        ps.stdin.write("mark\n")
        ps.stdin.flush()
        ps_cpu0, ps_switches0 = (float(v) for v in _expect(ps, "cpu"))
        for w in workers:
            w.stdin.write("go\n")
            w.stdin.flush()
        done = [_expect(w, "done") for w in workers]
        ps.stdin.write("report\n")
        ps.stdin.flush()
        report = _expect(ps, "report")
        for w in workers:
            w.stdin.write("end\n")
            w.stdin.flush()
            w.wait(timeout=60)
    finally:
        for proc in [ps, *workers]:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return {
        "wall_ms": statistics.median(float(d[0]) for d in done) * 1e3,
        "min_ms": min(float(d[1]) for d in done) * 1e3,
        "worker_cpu_ms": statistics.median(float(d[2]) for d in done) * 1e3,
        "worker_threads": [int(d[3]) for d in done],
        "worker_switches": statistics.median(float(d[4]) for d in done),
        "worker_rpcs": [json.loads(" ".join(d[5:])) for d in done],
        "ps_cpu_ms": (float(report[0]) - ps_cpu0) / (2 * steps) * 1e3,
        "ps_threads": int(report[1]),
        "ps_switches": (float(report[2]) - ps_switches0) / (2 * steps),
        "ps_rpcs": json.loads(" ".join(report[3:])),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--backend", default="tensorflux,tensorflow")
    parser.add_argument("--role", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "ps":
        ps_main(args.backend)
        return
    if args.role == "worker":
        worker_main(args.backend, args.steps)
        return
    print(f"# load {os.getloadavg()}")
    for _ in range(args.rounds):
        for backend in args.backend.split(","):
            result = run(backend, args.steps)
            steps = 2 * args.steps
            per_step = {
                "ps": {k: round(v / steps, 2) for k, v in result["ps_rpcs"].items()},
                "workers": {k: round(sum(r.get(k, 0) for r in result["worker_rpcs"]) / steps, 2)
                            for r in result["worker_rpcs"] for k in r}}
            print(f"{backend}\n{'':<11} wall {result['wall_ms']:6.2f} ms "
                  f"(min {result['min_ms']:6.2f})"
                  f"  worker cpu {result['worker_cpu_ms']:6.2f} ms  ps cpu "
                  f"{result['ps_cpu_ms']:6.2f} ms/step  threads ps {result['ps_threads']} "
                  f"workers {result['worker_threads']}  wake-ups/step worker "
                  f"{result['worker_switches']:.1f} ps {result['ps_switches']:.1f}")
            if backend != "tensorflow":
                print(f"{'':<11} RPCs served per cluster step: {per_step}")


if __name__ == "__main__":
    main()
