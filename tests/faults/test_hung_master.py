"""A client whose master task hangs (SIGSTOP) hears of it within seconds: its connection's
keepalive pings go unanswered, and the step fails with UnavailableError naming the master's
address (TF1's client would wait forever without a word)."""

import signal
import threading
import time

from fault_helpers import TaskProcess, free_port

import tensorflux as tf


def test_a_step_on_a_stopped_master_fails_naming_it():
    address = f"localhost:{free_port()}"
    spec = tf.train.ClusterSpec({"worker": [address]})
    master = TaskProcess(spec, "worker", 0)
    try:
        master.wait_ready()
        with tf.Graph().as_default():
            product = tf.constant(2.0) * 3.0
            with tf.Session("grpc://" + address) as sess:
                assert sess.run(product) == 6.0
                master.proc.send_signal(signal.SIGSTOP)
                start = time.monotonic()
                outcome = {}

                def step():
                    try:
                        outcome["value"] = sess.run(product)
                    except tf.errors.OpError as err:
                        outcome["error"] = err

                thread = threading.Thread(target=step, daemon=True)
                thread.start()
                thread.join(10)
                elapsed = time.monotonic() - start
                master.proc.send_signal(signal.SIGCONT)
        assert not thread.is_alive() and elapsed < 5.0, elapsed
        error = outcome["error"]
        assert isinstance(error, tf.errors.UnavailableError), error
        assert address in error.message and "keepalive" in error.message, error.message
    finally:
        master.proc.send_signal(signal.SIGCONT)
        master.kill()
