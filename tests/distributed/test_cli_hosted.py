"""`tensorflux cluster` runs each worker task's server in its Python program's process."""

import os
import subprocess
import sys

from tensorflux import cli

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PROGRAM = """
import atexit, json, os, sys
import tensorflux as tf
from tensorflux.distributed.server import local_server

cluster = json.loads(os.environ["TFX_CLUSTER"])
task = int(os.environ["TFX_TASK_INDEX"])
address = cluster["worker"][task]
atexit.register(lambda: open(sys.argv[1] + f".{task}", "w").write("atexit"))
with tf.device("/job:ps/task:0"):
    v = tf.Variable(3.0)
with tf.device(f"/job:worker/task:{task}"):
    w = v * float(task + 2)
with tf.Session("grpc://" + address) as sess:
    sess.run(v.initializer)
    print("value", task, sess.run(w), "in-process", local_server(address) is not None,
          __name__, sys.argv[2:], flush=True)
sys.exit(int(sys.argv[-1]))
"""


def test_python_program_parsing(tmp_path):
    python = sys.executable
    assert cli._python_program([python, "t.py", "-x"]) == ([python], ["t.py", "-x"])
    assert cli._python_program([python, "-u", "-X", "dev", "-Wignore", "-m", "pkg.mod", "a"]) \
        == ([python, "-u", "-X", "dev", "-Wignore"], ["-m", "pkg.mod", "a"])
    assert cli._python_program([python, "-c", "print(1)"]) is None  # no program file
    assert cli._python_program([python, "-I", "t.py"]) is None  # isolated: no PYTHONPATH
    assert cli._python_program([python]) is None
    assert cli._python_program(["sh", "run.sh"]) is None
    other = tmp_path / "python3"
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    assert cli._python_program([str(other), "t.py"]) is None  # another interpreter
    assert cli._python_program([]) is None


def test_hosted_workers_run_in_process_and_report_exit_codes(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    marker = str(tmp_path / "done")
    env = dict(os.environ, PYTHONPATH=REPO)
    out = subprocess.run(
        [sys.executable, "-m", "tensorflux.cli", "cluster", "--ps", "1", "--workers", "2",
         "--", sys.executable, str(script), marker, "x", "3"],
        env=env, capture_output=True, text=True, timeout=120)
    lines = sorted(line for line in out.stdout.splitlines() if line.startswith("value"))
    assert lines == ["value 0 6.0 in-process True __main__ ['x', '3']",
                     "value 1 9.0 in-process True __main__ ['x', '3']"], out.stdout + out.stderr
    assert out.returncode == 3  # the programs' exit code, through the hosted task's pipe
    for task in (0, 1):  # the program's atexit ran (its process ended normally)
        with open(f"{marker}.{task}") as handle:
            assert handle.read() == "atexit"


def test_exit_code_of_a_program_that_died_while_a_forked_child_holds_its_pipe():
    read_fd, write_fd = os.pipe()
    child = ("import os, sys, time\n"
             "if os.fork() == 0:\n    time.sleep(5)\n    os._exit(0)\nsys.exit(5)\n")
    proc = subprocess.Popen([sys.executable, "-c", child], pass_fds=(write_fd,))
    os.close(write_fd)
    assert cli._program_code(proc, read_fd) == 5  # not blocked until the child exits

    read_fd, write_fd = os.pipe()
    serving = f"import os, time\nos.write({write_fd}, b'7\\n')\ntime.sleep(30)\n"
    proc = subprocess.Popen([sys.executable, "-c", serving], pass_fds=(write_fd,))
    os.close(write_fd)
    try:
        assert cli._program_code(proc, read_fd) == 7  # reported; its task serves on
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()
