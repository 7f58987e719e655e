"""Processes for the fault tests: `tensorflux server` tasks and small client programs.

Every process is started by a fixture that kills and reaps it afterwards.
"""

import json
import os
import queue
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "distributed"))

from cluster_helpers import free_port, make_cluster  # noqa: E402

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

__all__ = ["TaskProcess", "ScriptProcess", "free_port", "make_cluster", "REPO_ROOT"]


class _Lines:
    def __init__(self, proc):
        self.proc = proc
        self.lines = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, text, timeout=30.0):
        """Returns the first output line containing `text`."""
        deadline = time.monotonic() + timeout
        while True:
            line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            if line is None:
                raise AssertionError(f"process exited ({self.proc.wait()}) before {text!r}")
            if text in line:
                return line

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


def _env():
    return dict(os.environ, PYTHONPATH=REPO_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))


class TaskProcess(_Lines):
    """`tensorflux server` for one task of `spec`, in its own process."""

    def __init__(self, spec, job, index):
        super().__init__(subprocess.Popen(
            [sys.executable, "-m", "tensorflux.cli", "server", "--cluster-json",
             json.dumps(spec.as_dict()), "--job", job, "--task", str(index)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env()))

    def wait_ready(self, timeout=30.0):
        self.wait_for("serving at", timeout)


class ScriptProcess(_Lines):
    """`python -c source args...`, its output read line by line."""

    def __init__(self, source, *args):
        super().__init__(subprocess.Popen(
            [sys.executable, "-c", source, *map(str, args)], stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, env=_env()))
