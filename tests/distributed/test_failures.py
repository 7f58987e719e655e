"""Failures of a multi-process cluster on 127.0.0.1: killed, hung, restarted and unreachable
tasks are reported by name within bounded time, and the session recovers once a task is back.

Every process a test starts is killed and reaped by the `tasks` fixture, which also checks
that none is left running.
"""

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from cluster_helpers import make_cluster

import tensorflux as tf
from tensorflux.distributed.rendezvous_mgr import RemoteRendezvous
from tensorflux.distributed.rpc.transport import InProcessWorkerClient
from tensorflux.distributed.worker import Worker
from tensorflux.runtime.device import local_devices
from tensorflux.runtime.executor import shared_pool
from tensorflux.runtime.rendezvous import create_key

PS0 = "/job:ps/replica:0/task:0"
WORKER1 = "/job:worker/replica:0/task:1"

class TaskProcess:
    """`tensorflux server` for one task, in its own process."""

    def __init__(self, spec, job, index):
        self.spec, self.job, self.index = spec, job, index
        self.lines = queue.Queue()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tensorflux.cli", "server", "--cluster-json",
             json.dumps(spec.as_dict()), "--job", job, "--task", str(index)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line)

    def wait_ready(self, timeout=30.0):
        deadline = time.monotonic() + timeout
        while True:
            line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            if "serving at" in line:
                return

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


@pytest.fixture
def tasks():
    """Starts task processes; kills and reaps them all afterwards, and checks they are gone."""
    started = []

    def start(spec, job, index, wait=True):
        task = TaskProcess(spec, job, index)
        started.append(task)
        if wait:
            task.wait_ready()
        return task

    yield start
    for task in started:
        task.kill()
    assert all(task.proc.poll() is not None for task in started)


def config(timeout_ms=3000):
    return tf.ConfigProto(operation_timeout_in_ms=timeout_ms)


def _regression(ps_device, worker_device):
    with tf.device(ps_device):
        w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    with tf.device(worker_device):
        x = tf.constant(np.random.RandomState(0).rand(16, 3).astype(np.float32))
        y = tf.reduce_sum(x, axis=1, keepdims=True)
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return w, loss, train


def _train_until_error(sess, train, kill, kill_after=0.3, limit=15.0):
    """Runs `train` in a loop, calls `kill()` from another thread after `kill_after` seconds;
    returns (the error, seconds from the kill to the error)."""
    killed_at = []

    def killer():
        time.sleep(kill_after)
        kill()
        killed_at.append(time.monotonic())

    thread = threading.Thread(target=killer)
    thread.start()
    deadline = time.monotonic() + limit
    try:
        while time.monotonic() < deadline:
            try:
                sess.run(train)
            except tf.errors.OpError as err:
                thread.join()
                return err, time.monotonic() - killed_at[0]
    finally:
        thread.join()
    raise AssertionError("training went on although a task was killed")


def test_killed_worker_is_reported_by_name_during_training(tasks):
    spec = make_cluster(ps=1, workers=2)
    chief = tf.train.Server(spec, "worker", 0, config=config())
    try:
        ps = tasks(spec, "ps", 0, wait=False)
        worker1 = tasks(spec, "worker", 1, wait=False)
        ps.wait_ready()
        worker1.wait_ready()
        with tf.Graph().as_default():
            w, loss, train = _regression("/job:ps/task:0", "/job:worker/task:1")
            with tf.Session(chief.target, config=config()) as sess:
                sess.run(w.initializer)
                first = sess.run(loss)
                sess.run(train)
                assert sess.run(loss) < first
                error, latency = _train_until_error(sess, train, worker1.kill)
                assert isinstance(error, (tf.errors.UnavailableError, tf.errors.AbortedError))
                assert WORKER1 in str(error), str(error)
                assert latency < 5.0
                # The surviving tasks are healthy: the PS still serves its variable.
                assert sess.run(w).shape == (3, 1)
        assert worker1.proc.poll() is not None
    finally:
        chief.stop()


def _blocked_step_then(action, ps_task, spec, cfg, on_worker):
    """Runs a step blocked in a dequeue on the PS, does `action()` while it waits; returns
    (the error, seconds from the action to the error)."""
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            q = tf.FIFOQueue(4, tf.float32, shapes=[[]], name="never_filled")
            value = q.dequeue()
        if on_worker:
            with tf.device("/job:worker/task:0"):
                value = value + 1.0  # the worker waits in a receive from the PS
        chief = tf.train.Server(spec, "worker", 0, config=cfg)
        try:
            with tf.Session(chief.target, config=cfg) as sess:
                box = []

                def step():
                    try:
                        sess.run(value)
                    except tf.errors.OpError as err:
                        box.append((err, time.monotonic()))

                thread = threading.Thread(target=step)
                thread.start()
                time.sleep(0.5)
                assert thread.is_alive()  # blocked in the dequeue
                acted = time.monotonic()
                action()
                thread.join(timeout=15)
                assert not thread.is_alive(), "the step still hangs"
                error, failed = box[0]
                return error, failed - acted
        finally:
            chief.stop()


@pytest.mark.parametrize("on_worker", [False, True], ids=["dequeue", "recv-from-dequeue"])
def test_ps_killed_mid_step_is_reported_within_seconds(tasks, on_worker):
    spec = make_cluster(ps=1, workers=1)
    ps = tasks(spec, "ps", 0)
    error, latency = _blocked_step_then(ps.kill, ps, spec, config(), on_worker)
    assert isinstance(error, (tf.errors.UnavailableError, tf.errors.AbortedError)), error
    assert PS0 in str(error) and spec.task_address("ps", 0) in str(error), str(error)
    assert latency < 3.0


def test_hung_ps_is_detected_by_heartbeats(tasks):
    spec = make_cluster(ps=1, workers=1)
    ps = tasks(spec, "ps", 0)
    # SIGSTOP keeps the connection open: only the master's heartbeats can tell.
    error, latency = _blocked_step_then(lambda: ps.proc.send_signal(signal.SIGSTOP), ps, spec,
                                        config(), on_worker=False)
    assert isinstance(error, tf.errors.UnavailableError), error
    assert PS0 in str(error) and "heartbeat" in str(error)
    assert latency < 6.0


def test_restarted_ps_serves_the_session_again(tasks):
    spec = make_cluster(ps=1, workers=1)
    ps = tasks(spec, "ps", 0)
    chief = tf.train.Server(spec, "worker", 0, config=config())
    try:
        with tf.Graph().as_default():
            w, loss, train = _regression("/job:ps/task:0", "/job:worker/task:0")
            with tf.Session(chief.target, config=config()) as sess:
                sess.run(w.initializer)
                losses = [sess.run([loss, train])[0] for _ in range(3)]
                ps.kill()
                with pytest.raises((tf.errors.UnavailableError, tf.errors.AbortedError)) as info:
                    sess.run([loss, train])
                assert PS0 in str(info.value)
                tasks(spec, "ps", 0)  # a new process (new incarnation) at the same address
                # Its variables are new: initialize them again, then training resumes.
                with pytest.raises(tf.errors.FailedPreconditionError):
                    sess.run(w)
                sess.run(w.initializer)
                again = [sess.run([loss, train])[0] for _ in range(3)]
                np.testing.assert_allclose(again, losses, rtol=1e-6)
    finally:
        chief.stop()


def test_stale_transfer_from_an_old_incarnation_is_refused():
    sender = Worker(PS0, local_devices("ps", 0, 1), None)
    device = sender.devices[0]
    receiving = "/job:worker/replica:0/task:0"
    step_id = 7
    outcomes = {}
    for label, incarnation in (("current", device.incarnation), ("stale", device.incarnation ^ 2)):
        key = create_key(device.name, incarnation, f"{receiving}/device:CPU:0", f"t_{label}")
        sender.rendezvous.find_or_create(step_id).send(key, np.arange(3.0), False)
        receiver = RemoteRendezvous(step_id, receiving,
                                    lambda task: InProcessWorkerClient(sender, task), shared_pool())
        try:
            outcomes[label] = receiver.recv(key, timeout=5)
        except tf.errors.OpError as err:
            outcomes[label] = err
    np.testing.assert_array_equal(outcomes["current"][0], np.arange(3.0))
    stale = outcomes["stale"]
    assert isinstance(stale, tf.errors.AbortedError)
    assert "Stale transfer refused" in stale.message and PS0 in stale.message


def test_unreachable_task_fails_within_the_configured_bound():
    spec = make_cluster(ps=1, workers=1)  # nothing listens at the PS address
    cfg = config(1000)
    cfg.rpc_options.use_rpc_for_inprocess_master = True  # the client goes through gRPC too
    worker = tf.train.Server(spec, "worker", 0, config=cfg)
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(1.0)
            with tf.Session(worker.target, config=cfg) as sess:
                start = time.monotonic()
                with pytest.raises(tf.errors.UnavailableError) as info:
                    sess.run(v.initializer)
                elapsed = time.monotonic() - start
        assert 0.9 <= elapsed < 4.0, elapsed
        message = str(info.value)
        assert PS0 in message and spec.task_address("ps", 0) in message, message
    finally:
        worker.stop()


def test_session_waits_for_a_task_that_comes_up_within_the_bound(tasks):
    spec = make_cluster(ps=1, workers=1)
    ps = tasks(spec, "ps", 0, wait=False)  # still importing when the session starts
    worker = tf.train.Server(spec, "worker", 0, config=config(20000))
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(3.0)
            with tf.Session(worker.target, config=config(20000)) as sess:
                sess.run(v.initializer)
                assert sess.run(v) == 3.0
        ps.wait_ready(timeout=1)
    finally:
        worker.stop()


def test_remote_kernel_error_names_op_and_task_and_spares_the_session(tasks):
    spec = make_cluster(ps=1, workers=1)
    tasks(spec, "ps", 0)
    chief = tf.train.Server(spec, "worker", 0, config=config())
    try:
        with tf.Graph().as_default():
            with tf.device("/job:worker/task:0"):
                a = tf.placeholder(tf.float32, [None, None])
            with tf.device("/job:ps/task:0"):
                bad = tf.matmul(a, a, name="bad_matmul")
            with tf.device("/job:worker/task:0"):
                out = bad * 2.0  # the worker waits for the PS's result when it fails
            with tf.Session(chief.target, config=config()) as sess:
                with pytest.raises(tf.errors.InvalidArgumentError) as info:
                    sess.run(out, {a: np.ones((2, 3), np.float32)})
                message = str(info.value)
                assert "bad_matmul" in message and PS0 in message, message
                np.testing.assert_allclose(sess.run(out, {a: np.eye(2, dtype=np.float32)}),
                                           2 * np.eye(2))
    finally:
        chief.stop()


def test_a_failing_task_cancels_transfers_blocked_elsewhere(tasks):
    spec = make_cluster(ps=1, workers=1)
    tasks(spec, "ps", 0)
    chief = tf.train.Server(spec, "worker", 0, config=config())
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                q = tf.FIFOQueue(4, tf.float32, shapes=[[]], name="empty_queue")
                waiting = q.dequeue()
                size = q.size()
            with tf.device("/job:worker/task:0"):
                a = tf.placeholder(tf.float32, [None, None])
                received = waiting + 1.0  # blocked in a RecvTensor from the PS
                bad = tf.matmul(a, a, name="worker_matmul")
            with tf.Session(chief.target, config=config()) as sess:
                start = time.monotonic()
                with pytest.raises(tf.errors.InvalidArgumentError) as info:
                    sess.run([received, bad], {a: np.ones((2, 3), np.float32)})
                assert time.monotonic() - start < 3.0
                assert "worker_matmul" in str(info.value)
                assert sess.run(size) == 0  # the PS's dequeue was cancelled, not left waiting
                sess.run(q.enqueue(5.0))
                bounded = tf.RunOptions(timeout_in_ms=5000)
                assert sess.run(received, options=bounded) == 6.0
    finally:
        chief.stop()


def test_cluster_command_leaves_no_process_behind_when_terminated(tmp_path):
    script = tmp_path / "job.py"
    pid_file = tmp_path / "pid"
    script.write_text(f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                      "print('started', flush=True)\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-m", "tensorflux.cli", "cluster", "--ps", "1",
                             "--workers", "1", "--", sys.executable, str(script)],
                            stdout=subprocess.PIPE, text=True)
    try:
        spec = None
        for _ in range(20):
            line = proc.stdout.readline()
            if line.startswith("local cluster:"):
                spec = json.loads(line.split(":", 1)[1])
            if line.startswith("started"):
                break
        assert spec is not None
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
        with pytest.raises(ProcessLookupError):  # the worker's program is gone too
            os.kill(int(pid_file.read_text()), 0)
        for address in spec["ps"] + spec["worker"]:
            host, port = address.split(":")
            with socket.socket() as sock:
                assert sock.connect_ex(("127.0.0.1", int(port))) != 0, address
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def test_closing_a_session_cancels_its_blocked_steps():
    """A step blocked on a ps queue nobody feeds ends with CancelledError when its session
    is closed (the master aborts the steps still running), instead of hanging its thread."""
    spec = make_cluster(ps=1, workers=1)
    servers = [tf.train.Server(spec, job, 0) for job in ("ps", "worker")]
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                q = tf.FIFOQueue(3, tf.float32, shapes=[])
                value = q.dequeue()
            sess = tf.Session(servers[1].target)
            outcome = queue.Queue()

            def blocked():
                try:
                    sess.run(value)
                    outcome.put("returned")
                except tf.errors.CancelledError as err:
                    outcome.put(err)

            thread = threading.Thread(target=blocked, daemon=True)
            thread.start()
            time.sleep(0.5)
            assert thread.is_alive()
            start = time.time()
            sess.close()
            result = outcome.get(timeout=10)
            assert isinstance(result, tf.errors.CancelledError), result
            assert time.time() - start < 10
            thread.join(5)
            assert not thread.is_alive()
    finally:
        for server in servers:
            server.stop()
