"""A PS that is alive but whose Python cannot run for a while (the GIL held, as under heavy CPU
load) is not declared dead: its gRPC core still answers the channel's pings, so its heartbeat
questions wait; a hung (SIGSTOPped) PS is still detected within 3 s (test_hung_task.py).

Before: a healthy PS that missed the 1.5 s heartbeat once at load ~13 failed the step."""

import json
import subprocess
import sys
import threading
import time

import pytest
from fault_helpers import REPO_ROOT, _env, _Lines, make_cluster

import tensorflux as tf

STALL_SECS = 2.5  # longer than the old 1.5 s heartbeat deadline

# A `tensorflux server` that holds its GIL for STALL_SECS once the trigger file appears:
# ctypes.PyDLL calls keep the GIL, so none of its Python threads (GetStatus included) runs.
_STALLING_SERVER = f"""
import ctypes, os, sys, threading, time
sys.path.insert(0, {REPO_ROOT!r})
from tensorflux import cli

def stall(trigger):
    while not os.path.exists(trigger):
        time.sleep(0.02)
    print("stalling", flush=True)
    ctypes.PyDLL(None).usleep(int({STALL_SECS} * 1e6))
    print("stalled", flush=True)

threading.Thread(target=stall, args=(sys.argv[1],), daemon=True).start()
sys.exit(cli.main(sys.argv[2:]))
"""


@pytest.fixture
def stalling_ps(tmp_path):
    spec = make_cluster(ps=1, workers=1)
    trigger = str(tmp_path / "stall")
    ps = _Lines(subprocess.Popen(
        [sys.executable, "-c", _STALLING_SERVER, trigger, "server", "--cluster-json",
         json.dumps(spec.as_dict()), "--job", "ps", "--task", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env()))
    chief = None
    try:
        ps.wait_for("serving at")
        chief = tf.train.Server(spec, "worker", 0)
        yield chief, ps, trigger
    finally:
        if chief is not None:
            chief.stop()
        ps.kill()


def test_a_ps_stalled_longer_than_the_old_deadline_does_not_fail_the_step(stalling_ps):
    chief, ps, trigger = stalling_ps
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            q = tf.FIFOQueue(2, tf.float32, shapes=[], name="slow_queue")
            value = q.dequeue()
            enqueue = q.enqueue(7.0)
        with tf.Session(chief.target) as sess:
            box = []

            def blocked():
                try:
                    box.append(sess.run(value))
                except tf.errors.OpError as err:
                    box.append(err)

            thread = threading.Thread(target=blocked, daemon=True)
            thread.start()
            time.sleep(0.5)  # heartbeats run for the blocked step
            open(trigger, "w").close()
            ps.wait_for("stalling", timeout=5)
            start = time.monotonic()
            ps.wait_for("stalled", timeout=10)
            stalled = time.monotonic() - start
            sess.run(enqueue)
            thread.join(timeout=5)
            assert box == [7.0], box
            assert stalled >= STALL_SECS - 0.3, stalled
            # The PS is not remembered as dead: later steps run on it.
            assert sess.run(q.size()) == 0
