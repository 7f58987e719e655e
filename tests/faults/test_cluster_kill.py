"""`kill -9` of `tensorflux cluster` takes its servers and its workers' programs with it."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

from fault_helpers import REPO_ROOT


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (dead, not yet reaped by init) counts as gone.
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_sigkill_of_the_cluster_command_takes_its_children_down(tmp_path):
    script = tmp_path / "job.py"
    pid_file = tmp_path / "pid"
    script.write_text(f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                      "print('started', flush=True)\ntime.sleep(60)\n")
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    proc = subprocess.Popen([sys.executable, "-m", "tensorflux.cli", "cluster", "--ps", "1",
                             "--workers", "1", "--", sys.executable, str(script)],
                            stdout=subprocess.PIPE, text=True, env=env)
    spec = None
    try:
        for _ in range(40):
            line = proc.stdout.readline()
            if line.startswith("local cluster:"):
                spec = json.loads(line.split(":", 1)[1])
            if line.startswith("started"):
                break
        assert spec is not None
        ports = [int(a.rsplit(":", 1)[1]) for a in spec["ps"] + spec["worker"]]
        assert all(_listening(port) for port in ports)
        program = int(pid_file.read_text())
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        killed = time.monotonic()
        while time.monotonic() - killed < 5.0:
            if not any(_listening(port) for port in ports) and not _alive(program):
                break
            time.sleep(0.05)
        gone_after = time.monotonic() - killed
        assert not any(_listening(port) for port in ports), "a server still listens"
        assert not _alive(program), "the worker's program still runs"
        assert gone_after < 3.0, gone_after
        print(f"children gone {gone_after:.2f}s after kill -9")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
