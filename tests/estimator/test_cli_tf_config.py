"""`tensorflux server` takes its cluster and task from TF_CONFIG; `tensorflux cluster` exports
TF_CONFIG (beside TFX_*) to the programs it runs."""

import json
import os
import socket
import subprocess
import sys

import pytest

import tensorflux as tf
from tensorflux import cli
from tensorflux.distributed.server import shutdown_cluster

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_server_reads_tf_config():
    cluster = {"ps": [f"localhost:{free_port()}"], "chief": [f"localhost:{free_port()}"],
               "evaluator": ["localhost:1"]}
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CONFIG=json.dumps(
        {"cluster": cluster, "task": {"type": "ps", "index": 0}}))
    proc = subprocess.Popen([sys.executable, "-m", "tensorflux.cli", "server"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        assert "/job:ps/replica:0/task:0 serving at" in line, line
        assert cluster["ps"][0].split(":")[1] in line
        shutdown_cluster(tf.train.ClusterSpec({"ps": cluster["ps"]}))
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_server_without_cluster_or_with_evaluator_task_exits(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"ps": ["localhost:1"]},
                                                "task": {"type": "evaluator", "index": 0}}))
    with pytest.raises(SystemExit, match="evaluator task of TF_CONFIG runs no server"):
        cli.main(["server"])
    monkeypatch.setenv("TF_CONFIG", "{oops")
    with pytest.raises(SystemExit, match="not valid JSON"):
        cli.main(["server"])
    monkeypatch.delenv("TF_CONFIG")
    with pytest.raises(SystemExit, match="or TF_CONFIG"):
        cli.main(["server"])
    with pytest.raises(SystemExit, match="needs --job"):
        cli.main(["server", "--cluster", "ps=localhost:1"])


class _FakeProcess:
    """Stands for a started process: a server prints its ready line, a program exits 0."""

    started = []

    pid = 2**30  # above Linux's pid_max: signalling its group finds no process

    def __init__(self, command, env=None, stdout=None, text=None, preexec_fn=None,
                 pass_fds=()):
        self.command, self.env = command, env
        self.stdout = iter(["tensorflux server serving at grpc://fake\n"]) if stdout else None
        self.returncode = None
        _FakeProcess.started.append(self)

    def poll(self):
        return self.returncode

    def wait(self, timeout=None):
        self.returncode = 0
        return 0

    def terminate(self):
        self.returncode = -15

    def send_signal(self, signum):
        self.returncode = -int(signum)

    kill = terminate


def test_cluster_exports_tf_config_to_each_program(monkeypatch):
    _FakeProcess.started = []
    monkeypatch.setattr(cli.subprocess, "Popen", _FakeProcess)
    assert cli.main(["cluster", "--ps", "1", "--workers", "2", "--separate-servers", "--",
                     "python", "train.py"]) == 0
    programs = [p for p in _FakeProcess.started if p.command == ["python", "train.py"]]
    assert len(programs) == 2 and len(_FakeProcess.started) == 5
    for index, program in enumerate(programs):
        tf_config = json.loads(program.env["TF_CONFIG"])
        cluster = json.loads(program.env["TFX_CLUSTER"])
        assert tf_config == {"cluster": cluster, "task": {"type": "worker", "index": index},
                             "environment": "google"}
        assert program.env["TFX_TASK_INDEX"] == str(index)
        assert sorted(cluster) == ["ps", "worker"] and len(cluster["worker"]) == 2


def test_cluster_hosts_each_worker_task_in_its_python_program(monkeypatch):
    _FakeProcess.started = []
    monkeypatch.setattr(cli.subprocess, "Popen", _FakeProcess)
    assert cli.main(["cluster", "--ps", "1", "--workers", "2", "--", sys.executable, "-u",
                     "train.py", "--steps", "3"]) == 0
    # The PS server, then one process per worker: its server and its program.
    assert len(_FakeProcess.started) == 3
    assert _FakeProcess.started[0].command[3] == "server"
    for index, program in enumerate(_FakeProcess.started[1:]):
        command = program.command
        assert command[:5] == [sys.executable, "-u", "-m", "tensorflux.cli", "hosted-worker"]
        assert command[command.index("--task") + 1] == str(index)
        assert command[command.index("--"):] == ["--", "train.py", "--steps", "3"]
        tf_config = json.loads(program.env["TF_CONFIG"])
        assert tf_config["task"] == {"type": "worker", "index": index}
