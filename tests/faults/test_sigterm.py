"""SIGTERM to a `tensorflux server` task: it exits cleanly (code 0) and at once, its port is
free for a restarted task, and a peer's blocked step fails with UnavailableError naming the
task and its address (not a timeout: the task is gone, so its heartbeat is refused)."""

import signal
import socket
import threading
import time

from fault_helpers import TaskProcess, make_cluster

import tensorflux as tf

PS0 = "/job:ps/replica:0/task:0"


def test_sigterm_to_a_server_exits_cleanly_and_peers_see_it_by_name():
    spec = make_cluster(ps=1, workers=1)
    ps = TaskProcess(spec, "ps", 0)
    worker = tf.train.Server(spec, "worker", 0)
    try:
        ps.wait_ready()
        address = spec.task_address("ps", 0)
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                queue = tf.FIFOQueue(4, tf.float32, shapes=[])
                value = queue.dequeue(name="waiting_dequeue")
            with tf.Session(worker.target) as sess:
                assert sess.run(queue.size()) == 0
                outcome = {}

                def blocked():
                    try:
                        sess.run(value)
                    except tf.errors.OpError as err:
                        outcome["error"] = err

                thread = threading.Thread(target=blocked)
                thread.start()
                time.sleep(0.3)
                start = time.monotonic()
                ps.proc.send_signal(signal.SIGTERM)
                assert ps.proc.wait(timeout=10) == 0
                exited = time.monotonic() - start
                thread.join(timeout=15)
                assert not thread.is_alive()
        assert exited < 5.0, exited
        error = outcome["error"]
        assert isinstance(error, tf.errors.UnavailableError), error
        assert PS0 in error.message and address in error.message, error.message
        assert "no heartbeat within" not in error.message, error.message
        port = int(address.rpartition(":")[2])
        with socket.socket() as probe:  # free for a restart (gRPC binds with SO_REUSEADDR too)
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(("127.0.0.1", port))
    finally:
        worker.stop()
        ps.kill()
