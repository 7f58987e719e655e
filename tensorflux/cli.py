"""The `tensorflux` command: run one server task, or a whole local cluster on loopback.

    tensorflux server --cluster ps=host0:2222 --cluster worker=host1:2222,host2:2222 \\
        --job worker --task 0
    tensorflux cluster --ps 1 --workers 2 -- python train.py

`cluster` starts every task on 127.0.0.1 with free ports, runs the command once per worker
with TF_CONFIG-style environment variables (TFX_CLUSTER as JSON, TFX_JOB_NAME, TFX_TASK_INDEX,
and TFX_SERVERS_RUNNING=1: connect with tf.Session, do not start servers) and stops every
server when the workers finish (or on Ctrl-C). A Python program run by this interpreter hosts
its worker task's server in its own process (`hosted-worker`; its session reaches the task
in-process, no RPC per step); `--separate-servers` starts those servers apart. With
`--no-servers` it starts no server and runs the command once per task of every job instead
(the program starts its own servers).
`--token` gives the cluster a fresh random token (TFX_CLUSTER_TOKEN for servers and programs).

Security (docs/DEPLOY.md): servers take TLS files and a token from the TFX_* environment or
the flags; `server` on a non-loopback address with neither prints a one-line warning.

`server` without --cluster reads the cluster and its task from TF_CONFIG, as set by cluster
managers (Kubeflow's TFJob, SageMaker, Vertex AI); `cluster` also exports TF_CONFIG to the
programs it starts (with "environment": "google", TF's marker that the servers already run,
unless --no-servers).

`cluster`'s children die with it even when it is killed outright (`kill -9`): on Linux each
child asks the kernel for SIGKILL (a server) or SIGTERM (a program) when its parent dies
(PR_SET_PDEATHSIG); each child also leads its own process group, which is signalled as a
whole when the cluster stops, so the processes a program started go too.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys

from tensorflux.distributed.cluster_spec import ClusterSpec
from tensorflux.distributed.rpc.security import RpcSecurity, is_loopback
from tensorflux.distributed.server import Server, bind_address_for
from tensorflux.framework import errors
from tensorflux.protos.config_pb2 import ConfigProto
from tensorflux.runtime import thread_budget


def _parse_cluster(items) -> dict:
    cluster: dict = {}
    for item in items or []:
        job, _, addresses = item.partition("=")
        if not job or not addresses:
            raise SystemExit(f"--cluster expects job=host:port[,host:port...], got {item!r}")
        cluster[job] = addresses.split(",")
    return cluster


def _free_ports(count: int) -> list:
    """`count` distinct free ports on 127.0.0.1 (bound all at once: none is given twice)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _tf_config_task(job, task):
    """(cluster, job, task) from TF_CONFIG; --job/--task, when given, win over its task."""
    try:
        tf_config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    except json.JSONDecodeError as err:
        raise SystemExit(f"TF_CONFIG is not valid JSON: {err}") from None
    own = tf_config.get("task") or {}
    job = job if job is not None else own.get("type")
    task = task if task is not None else own.get("index")
    if job == "evaluator":
        raise SystemExit("the evaluator task of TF_CONFIG runs no server")
    cluster = {name: tasks for name, tasks in (tf_config.get("cluster") or {}).items()
               if name != "evaluator"}
    return cluster, job, task


def security_warning(address: str, security: RpcSecurity, bind: str | None = None):
    """The one-line warning for a server reachable beyond loopback with no token or TLS."""
    if security.token or security.uses_tls:
        return None
    host = bind_address_for(address, bind).rpartition(":")[0]
    if is_loopback(host):
        return None
    return (f"WARNING: tensorflux server listens on {host} with no cluster token and no TLS: "
            "anyone who reaches the port can run any op (file reads and writes included); set "
            "TFX_CLUSTER_TOKEN and/or TFX_TLS_* (docs/DEPLOY.md).")


def _server_security(args) -> RpcSecurity:
    env = dict(os.environ)
    for flag, name in (("tls_cert", "TFX_TLS_CERT"), ("tls_key", "TFX_TLS_KEY"),
                       ("tls_ca", "TFX_TLS_CA"), ("token_file", "TFX_CLUSTER_TOKEN_FILE"),
                       ("max_message_bytes", "TFX_MAX_MESSAGE_BYTES")):
        if getattr(args, flag, None):
            env[name] = str(getattr(args, flag))
    if getattr(args, "mutual_tls", False):
        env["TFX_TLS_MUTUAL"] = "1"
    return RpcSecurity.from_env(env)


def run_server(args) -> int:
    job, task = args.job, args.task
    source = "--cluster"
    if args.cluster_json:
        source = "--cluster-json"
        try:
            cluster = json.loads(args.cluster_json)
        except json.JSONDecodeError as err:
            raise SystemExit(f"tensorflux server --cluster-json is not valid JSON: {err}") \
                from None
    else:
        cluster = _parse_cluster(args.cluster)
    if not cluster:
        source = "TF_CONFIG"
        cluster, job, task = _tf_config_task(job, task)
    if not cluster:
        raise SystemExit("tensorflux server needs --cluster (or --cluster-json, or TF_CONFIG)")
    if job is None:
        raise SystemExit("tensorflux server needs --job (or a task in TF_CONFIG)")
    try:
        task = int(task or 0)
    except (TypeError, ValueError):
        raise SystemExit(f"tensorflux server: the task index {task!r} is not an integer "
                         f"({source})") from None
    try:
        thread_budget.set_process_threads(args.threads)
    except ValueError as err:
        raise SystemExit(f"tensorflux server --threads: {err}") from None
    config = ConfigProto(device_count={"CPU": args.cpus})
    try:  # a setup mistake is one line naming it, not a traceback
        spec = ClusterSpec(cluster)
        address = spec.task_address(job, task)
    except (TypeError, ValueError) as err:
        raise SystemExit(f"tensorflux server: {err} (the cluster of {source}: "
                         f"{json.dumps(cluster)})") from None
    security = _server_security(args)
    warning = security_warning(address, security, args.bind)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    try:
        server = Server(spec, job_name=job, task_index=task, config=config,
                        security=security, bind_address=args.bind)
    except (errors.UnknownError, errors.InvalidArgumentError) as err:  # port taken or bad
        raise SystemExit(f"tensorflux server {job}:{task}: {err.message}") from None
    print(f"tensorflux server {server.task_name} serving at {server.target}", flush=True)

    def stop(*_):
        server.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.join()
    return 0


# Interpreter options a hosted program may carry (`_python_program`); others (-I, -E, -c, ...)
# change what the interpreter imports or runs, so such a command gets a server process.
_PYTHON_FLAGS = frozenset({"-u", "-B", "-O", "-OO", "-b", "-bb", "-q", "-d"})
_PYTHON_VALUED = ("-X", "-W")


def _python_program(command):
    """(the interpreter with its options, the program: [script, args...] or ["-m", module,
    args...]) when `command` runs a Python program with this process's interpreter (so that
    tensorflux imports there); None otherwise."""
    if not command:
        return None
    found = shutil.which(command[0])
    if found is None or os.path.realpath(found) != os.path.realpath(sys.executable):
        return None
    options = []
    index = 1
    while index < len(command):
        arg = command[index]
        if arg in _PYTHON_FLAGS or (arg[:2] in _PYTHON_VALUED and len(arg) > 2):
            options.append(arg)
            index += 1
        elif arg in _PYTHON_VALUED and index + 1 < len(command):
            options += command[index:index + 2]
            index += 2
        elif arg == "-m" and index + 1 < len(command):
            return [command[0], *options], command[index:]
        elif arg.startswith("-"):
            return None
        else:
            return [command[0], *options], command[index:]
    return None


def _run_program(program) -> int:
    """Runs a Python program (`[script, args...]` or `["-m", module, args...]`) in this
    process as the interpreter would run it as `__main__`; returns its exit code."""
    import runpy
    import traceback

    try:
        if program[0] == "-m":
            sys.argv = [program[1], *program[2:]]
            runpy.run_module(program[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(program)
            sys.path[0] = os.path.dirname(os.path.abspath(program[0]))
            runpy.run_path(program[0], run_name="__main__")
        return 0
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            return done.code or 0
        print(done.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        traceback.print_exc()
        return 130
    except BaseException:  # noqa: BLE001 - reported as the interpreter would
        traceback.print_exc()
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


def run_hosted_worker(args) -> int:
    """A worker of `tensorflux cluster` whose server runs in its program's process.

    The program's `tf.Session("grpc://<its task>")` then reaches the master in-process (as
    TF1's between-graph programs, each a server and its client, do), instead of sending every
    step over RPC to a server process of its own. Once the program ends, its exit code is
    written to `--done-fd` (the CLI's pipe) and the task keeps serving other workers until
    the CLI stops the cluster (SIGTERM); without `--done-fd` the process exits with it.
    """
    try:
        thread_budget.set_process_threads(args.threads)
    except ValueError as err:
        raise SystemExit(f"tensorflux cluster --threads: {err}") from None
    spec = ClusterSpec(json.loads(args.cluster_json))
    server = Server(spec, job_name="worker", task_index=args.task,
                    config=ConfigProto(device_count={"CPU": 1}), security=_server_security(args))
    print(f"tensorflux server {server.task_name} serving at {server.target}", flush=True)
    code = _run_program(args.program[1:] if args.program[:1] == ["--"] else args.program)
    if args.done_fd is not None:
        done = [False]

        def stop(*_):
            done[0] = True
            server.stop()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        try:
            os.write(args.done_fd, f"{code}\n".encode())
            os.close(args.done_fd)
        except OSError:
            pass  # the CLI is gone: its death signal ends this process
        if not done[0]:
            server.join()
    server.stop()
    return code


def _program_code(proc, done_fd) -> int:
    """The exit code of a hosted program: what it reported on `done_fd`, else its process's
    once it ended (a child the program forked may hold the pipe open after it)."""
    import select

    with os.fdopen(done_fd, "rb", buffering=0) as reports:
        while True:
            ended = proc.poll() is not None
            if select.select([reports], [], [], 0 if ended else 0.2)[0]:
                line = reports.readline().strip()
                if line.lstrip(b"-").isdigit():
                    return int(line)
                return proc.wait()  # closed without a report: the process ended
            if ended:
                return proc.returncode


def _wait_serving(proc, timeout: float) -> None:
    """Waits for a server process to print its 'serving at' line, then echoes its output."""
    import threading

    ready = threading.Event()

    def pump():
        for line in proc.stdout:
            if "serving at" in line:
                ready.set()
            sys.stdout.write(line)
            sys.stdout.flush()
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    if not ready.wait(timeout) or proc.poll() is not None:
        raise SystemExit(f"a server of the local cluster did not start (exit code "
                         f"{proc.poll()})")


_PR_SET_PDEATHSIG = 1


def _die_with_parent(signum: int, parent: int):
    """A `preexec_fn`: in the child, before exec, ask for `signum` when the parent dies.

    prctl is looked up here, in the parent: the child of a threaded process should do as
    little as possible between fork and exec (no dynamic loading).
    """
    prctl = None
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            prctl = None

    def setup():
        os.setpgid(0, 0)  # its own process group (Popen's process_group needs Python 3.11)
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request was in place
            os.kill(os.getpid(), signum)

    return setup


def run_cluster(args) -> int:
    command = args.command[1:] if args.command and args.command[0] == "--" else args.command
    ports = [f"localhost:{port}" for port in _free_ports(args.ps + args.workers)]
    cluster = {"ps": ports[:args.ps], "worker": ports[args.ps:]}
    cluster = {job: tasks for job, tasks in cluster.items() if tasks}
    spec = json.dumps(cluster)
    # N tasks on one machine share its cores rather than each assuming all of them.
    threads = dict(zip(("ps", "worker"), thread_budget.share_cores(
        thread_budget.process_cores(), args.ps, args.workers)))
    servers = []
    workers = []
    reports: list = []  # the hosted programs' exit-code pipes (run_hosted_worker)
    base_env = dict(os.environ)
    if args.token:
        base_env["TFX_CLUSTER_TOKEN"] = secrets.token_hex(16)

    def terminated(signum, frame):
        raise KeyboardInterrupt

    # NOTE: without this a SIGTERM (a cluster manager, `kill`) would end this process
    # without its `finally`, leaving every server and worker process behind.
    signal.signal(signal.SIGTERM, terminated)
    try:
        if args.no_servers:
            if not command:
                raise SystemExit("tensorflux cluster --no-servers needs a program to run")
            # The program starts its own servers: once per task of every job. Tasks other
            # than workers (ps) are stopped when the workers finish.
            others = []
            for job, tasks in cluster.items():
                for index in range(len(tasks)):
                    tf_config = {"cluster": cluster, "task": {"type": job, "index": index}}
                    env = dict(base_env, TFX_CLUSTER=spec, TFX_JOB_NAME=job,
                               TFX_TASK_INDEX=str(index), TFX_SERVERS_RUNNING="0",
                               TF_CONFIG=json.dumps(tf_config))
                    proc = subprocess.Popen(
                        command, env=env,
                        preexec_fn=_die_with_parent(signal.SIGTERM, os.getpid()))
                    (workers if job == "worker" else others).append(proc)
            servers.extend(others)
            print(f"local cluster (servers started by the program): {spec}", flush=True)
        else:
            python = None if args.separate_servers else _python_program(command)
            for job, tasks in cluster.items():
                if python is not None and job == "worker":
                    continue  # each served by its program's process (run_hosted_worker)
                for index in range(len(tasks)):
                    servers.append(subprocess.Popen(
                        [sys.executable, "-m", "tensorflux.cli", "server", "--cluster-json",
                         spec, "--job", job, "--task", str(index), "--threads",
                         str(threads[job])], stdout=subprocess.PIPE,
                        text=True, env=base_env,
                        preexec_fn=_die_with_parent(signal.SIGKILL, os.getpid())))
            for proc in servers:
                _wait_serving(proc, timeout=60.0)
            print(f"local cluster: {spec}", flush=True)
            if not command:
                for proc in servers:
                    proc.wait()
                return 0
            for index in range(len(cluster.get("worker", []))):
                tf_config = {"cluster": cluster, "task": {"type": "worker", "index": index},
                             "environment": "google"}
                env = dict(base_env, TFX_CLUSTER=spec, TFX_JOB_NAME="worker",
                           TFX_TASK_INDEX=str(index), TFX_SERVERS_RUNNING="1",
                           TF_CONFIG=json.dumps(tf_config))
                if python is None:
                    workers.append(subprocess.Popen(
                        command, env=env,
                        preexec_fn=_die_with_parent(signal.SIGTERM, os.getpid())))
                    continue
                interpreter, program = python
                read_fd, write_fd = os.pipe()
                reports.append(read_fd)
                try:
                    workers.append(subprocess.Popen(
                        [*interpreter, "-m", "tensorflux.cli", "hosted-worker", "--cluster-json",
                         spec, "--task", str(index), "--threads", str(threads["worker"]),
                         "--done-fd", str(write_fd), "--", *program],
                        env=env, pass_fds=(write_fd,),
                        preexec_fn=_die_with_parent(signal.SIGTERM, os.getpid())))
                finally:
                    os.close(write_fd)
        # Hosted programs report on their pipe (their task may serve on after them).
        codes = [_program_code(proc, reports.pop(0)) if reports else proc.wait()
                 for proc in workers]
        return max(codes) if codes else 0
    except KeyboardInterrupt:
        return 130
    finally:
        for fd in reports:
            os.close(fd)
        _stop_all(workers + servers)


def _signal_group(proc, signum) -> None:
    """Signals the process group `proc` leads (its own children too)."""
    try:
        os.killpg(proc.pid, signum)
    except (ProcessLookupError, PermissionError):
        if proc.poll() is None:
            proc.send_signal(signum)


def _stop_all(procs) -> None:
    """Terminates every process group still running (killing those that ignore it) and reaps
    all."""
    for proc in procs:
        if proc.poll() is None:
            _signal_group(proc, signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            proc.wait()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="tensorflux", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="which", required=True, metavar="{server,cluster}")
    server = commands.add_parser("server", help="run one task of a cluster")
    server.add_argument("--cluster", action="append", help="job=host:port[,host:port...]")
    server.add_argument("--cluster-json", help="the cluster as a JSON object")
    server.add_argument("--job", help="the task's job (default: TF_CONFIG's task type)")
    server.add_argument("--task", type=int, help="the task's index (default: TF_CONFIG's, or 0)")
    server.add_argument("--cpus", type=int, default=1, help="CPU devices of the task")
    server.add_argument("--bind", help="host:port (or host) to listen on instead of the "
                        "task's address (default: its IP literal; all interfaces for a name)")
    server.add_argument("--tls-cert", help="PEM certificate chain (or TFX_TLS_CERT)")
    server.add_argument("--tls-key", help="PEM private key (or TFX_TLS_KEY)")
    server.add_argument("--tls-ca", help="PEM CA bundle peers chain to (or TFX_TLS_CA)")
    server.add_argument("--mutual-tls", action="store_true",
                        help="require client certificates (or TFX_TLS_MUTUAL=1)")
    server.add_argument("--token-file", help="file holding the cluster token (or "
                        "TFX_CLUSTER_TOKEN / TFX_CLUSTER_TOKEN_FILE)")
    server.add_argument("--max-message-bytes", type=int,
                        help="largest gRPC message (or TFX_MAX_MESSAGE_BYTES; 2 GiB - 1)")
    server.add_argument("--threads", type=int, default=None,
                        help="cores of this task's thread budget (default: all it may use)")
    server.set_defaults(run=run_server)
    cluster = commands.add_parser("cluster", help="run a local cluster on loopback")
    cluster.add_argument("--ps", type=int, default=1)
    cluster.add_argument("--workers", type=int, default=2)
    cluster.add_argument("--no-servers", action="store_true",
                         help="start no servers: run the program once per task (ps too); it "
                         "starts its own tf.train.Server")
    cluster.add_argument("--separate-servers", action="store_true",
                         help="run each worker's server in a process of its own, apart from "
                         "its program (default for a Python program: in the program's "
                         "process, which then reaches its task in-process)")
    cluster.add_argument("--token", action="store_true",
                         help="give the cluster a fresh random token (TFX_CLUSTER_TOKEN)")
    cluster.add_argument("command", nargs=argparse.REMAINDER,
                         help="-- program to run once per worker")
    cluster.set_defaults(run=run_cluster)
    hosted = commands.add_parser("hosted-worker")  # started by `cluster` (run_hosted_worker)
    hosted.add_argument("--cluster-json", required=True)
    hosted.add_argument("--task", type=int, required=True)
    hosted.add_argument("--threads", type=int, default=None)
    hosted.add_argument("--done-fd", type=int, default=None)
    hosted.add_argument("program", nargs=argparse.REMAINDER)
    hosted.set_defaults(run=run_hosted_worker)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
