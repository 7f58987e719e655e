"""The slow one (bounded at 90 s): train_and_evaluate on a loopback cluster of processes that
know the cluster only through TF_CONFIG (chief + 1 worker + 1 ps + evaluator), running the
unchanged examples/estimator_custom_model_fn.py."""

import json
import os
import re
import socket
import subprocess
import sys
import time

import tensorflux as tf
from tensorflux.distributed.server import shutdown_cluster

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAM = os.path.join(ROOT, "examples", "estimator_custom_model_fn.py")
BUDGET_SECS = 90
# Enough steps that the chief is still training when the worker joins (after its 1 s delay
# and its own start-up), even on a fast machine: both replicas must run steps.
MAX_STEPS = 400


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start(task_type, index, cluster, model_dir, log_dir):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CONFIG=json.dumps(
        {"cluster": cluster, "task": {"type": task_type, "index": index}}))
    log = open(os.path.join(log_dir, f"{task_type}{index}.log"), "w")
    proc = subprocess.Popen([sys.executable, PROGRAM, "--model_dir", model_dir,
                             "--max_steps", str(MAX_STEPS)], env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    proc.log_path = log.name
    return proc


def _output(proc):
    with open(proc.log_path) as handle:
        return handle.read()


def test_slow_train_and_evaluate_on_a_tf_config_cluster(tmp_path):
    cluster = {"chief": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"],
               "ps": [f"localhost:{free_port()}"]}
    model_dir = str(tmp_path / "model")
    procs = {name: _start(name, 0, cluster, model_dir, str(tmp_path))
             for name in ("ps", "chief", "worker", "evaluator")}
    deadline = time.time() + BUDGET_SECS
    try:
        for name in ("chief", "worker", "evaluator"):
            code = procs[name].wait(timeout=max(1.0, deadline - time.time()))
            assert code == 0, f"{name} exited with {code}:\n{_output(procs[name])[-3000:]}"
        # The ps task serves until the cluster manager ends it, as in TF: here the test
        # plays the manager and asks it to shut down.
        shutdown_cluster(tf.train.ClusterSpec({"ps": cluster["ps"]}))
        assert procs["ps"].wait(timeout=max(1.0, deadline - time.time())) == 0
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    chief = _output(procs["chief"])
    assert "learned w:" in chief
    evaluator = _output(procs["evaluator"])
    assert "evaluator:" in evaluator
    eval_files = os.listdir(os.path.join(model_dir, "eval"))
    assert any("tfevents" in f for f in eval_files)
    # The evaluator's metrics, read back from its event file: the last is at the final step
    # and the model converged (y is an exact linear function of x).
    results = []
    for f in eval_files:
        for event in tf.train.summary_iterator(os.path.join(model_dir, "eval", f)):
            if event.HasField("summary"):
                results.append((event.step, {v.tag: v.simple_value
                                             for v in event.summary.value}))
    step, last = max(results, key=lambda r: r[0])
    assert step >= MAX_STEPS
    assert last["loss"] < 1e-2 and last["rmse"] < 0.1
    # Between-graph replication: chief and worker both ran steps on the shared variables.
    ran = {name: int(re.search(r"done, ran (\d+) training steps", _output(procs[name]))[1])
           for name in ("chief", "worker", "ps")}
    assert ran["chief"] > 0 and ran["worker"] > 0 and ran["ps"] == 0, ran
    assert ran["chief"] + ran["worker"] >= MAX_STEPS, ran
    # NOTE: the other replica may add a step between the chief reading the global step for the
    # checkpoint's name and saving its variables (as in TF), so the two may differ by one.
    ckpt_step = int(tf.train.latest_checkpoint(model_dir).rsplit("-", 1)[1])
    assert abs(ckpt_step - step) <= 1, (ckpt_step, step)
