"""`tf.train.Server`: one task of a cluster, hosting a master and a worker service.

`Server(cluster, job_name, task_index)` owns the task's devices (and so its variables and
queues, shared by every session in the cluster until their container is reset), serves both
services over gRPC on the task's address, and can be stopped cleanly: `stop()` locally, or
`shutdown_cluster(target)` asking every task from the chief. Servers of one process reach each
other in-process unless `ConfigProto.rpc_options.use_rpc_for_inprocess_master` is set.

Security (docs/DEPLOY.md): `security=RpcSecurity(...)` (default: from the TFX_* environment,
see `rpc.security`) sets TLS, a cluster token checked on every RPC and message limits; the
server's own peers (master -> worker, worker -> worker) use the same. Binding: a task whose
address in the spec is an IP literal listens on that IP only, localhost on the loopback
interface, a host name on every interface (the name need not resolve yet when it starts);
`bind_address` overrides. The port is bound exclusively: a second server on it fails.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import threading
import time

from tensorflux.distributed.cluster_spec import ClusterSpec
from tensorflux.distributed.collective_transport import TaskCollectives
from tensorflux.distributed.master import Master
from tensorflux.distributed.rpc import security as security_mod
from tensorflux.distributed.rpc import transfers, transport
from tensorflux.distributed.rpc.grpc_server import start_grpc_server
from tensorflux.distributed.worker import Worker
from tensorflux.framework import errors
from tensorflux.ops.collective import exchange as collective_exchange
from tensorflux.platform import tf_logging as logging
from tensorflux.protos import config_pb2, tensorflow_server_pb2, worker_pb2
from tensorflux.runtime import thread_budget
from tensorflux.runtime.device import local_devices

__all__ = ["Server", "shutdown_cluster"]

_LOCAL_SERVERS: dict = {}
_LOCAL_LOCK = threading.Lock()


def local_server(address: str):
    with _LOCAL_LOCK:
        return _LOCAL_SERVERS.get(address)


def bind_address_for(address: str, bind_address: str | None = None) -> str:
    """The 'host:port' a task with `address` in its cluster spec listens on.

    An IP literal binds that IP, localhost the loopback interface, a host name every
    interface; `bind_address` ('host:port', or a host taking the task's port) overrides.
    """
    host, _, port = address.rpartition(":")
    if bind_address:
        bind_host, sep, bind_port = bind_address.rpartition(":")
        if sep and bind_port.isdigit() and (bind_host.endswith("]") or ":" not in bind_host):
            return bind_address
        return f"{bind_address}:{port}"
    if host in ("localhost", ""):
        return f"127.0.0.1:{port}"
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return f"0.0.0.0:{port}"
    return f"{host}:{port}"


def _normalize(address: str) -> str:
    host, _, port = address.rpartition(":")
    if host in ("localhost", "127.0.0.1", "[::1]", "0.0.0.0", ""):
        host = "localhost"
    return f"{host}:{port}"


_THIS_HOST = ("localhost", "127.0.0.1", "::1", "0.0.0.0", "")


def _on_this_host(address: str) -> bool:
    host = address.rpartition(":")[0].strip("[]")
    return host in _THIS_HOST or host.startswith("127.") or host == socket.gethostname()


def one_host_cores(cluster: ClusterSpec, job: str, config=None) -> int | None:
    """The cores of a task whose cluster runs wholly on this machine, or None.

    Tasks of one machine share its cores (as `tensorflux cluster` gives each server a
    `--threads` share): a task that assumed all of them would split its kernels over threads
    that only wake up to wait for the other tasks' (one PS + two workers on two cores: ~20%
    slower steps). A PS task gets one core, every other task an equal share of the rest
    (`thread_budget.share_cores`). None (the process's own budget) when the cluster has one
    task, spans machines, the process's cores were set (`--threads`), the config sets the
    intra-op or inter-op threads, or TFX_SHARE_CORES=0.
    """
    if os.environ.get("TFX_SHARE_CORES", "1") == "0" or thread_budget.process_threads_set():
        return None
    if config is not None and (config.intra_op_parallelism_threads
                               or config.inter_op_parallelism_threads):
        return None
    addresses = [cluster.task_address(j, i) for j in cluster.jobs
                 for i in cluster.task_indices(j)]
    if len(addresses) < 2 or not all(_on_this_host(a) for a in addresses):
        return None
    ps_tasks = len(cluster.task_indices("ps")) if "ps" in cluster.jobs else 0
    ps_cores, other_cores = thread_budget.share_cores(
        thread_budget.process_cores(), ps_tasks, len(addresses) - ps_tasks)
    return ps_cores if job == "ps" else other_cores


class Server:
    """An in-process TensorFlow server (TF1 `tf.train.Server`)."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True, security=None, bind_address=None):
        """Creates (and by default starts) the server of one task.

        Args:
            server_or_cluster_def: a `tf.train.ServerDef`, `ClusterSpec`, dict or ClusterDef.
            job_name, task_index: this task (may be omitted when the cluster has one).
            protocol: "grpc" (the only one).
            config: a `tf.ConfigProto` of the sessions this server runs.
            start: start serving now.
            security: an `RpcSecurity` (TLS, cluster token, message limits); None reads the
                TFX_* environment variables (all off when unset).
            bind_address: the 'host:port' (or host) to listen on, overriding the address
                derived from the task's entry in the cluster spec.

        Raises:
            ValueError: an ambiguous job or task, or an unsupported protocol.
            UnknownError: the port cannot be bound (e.g. another server holds it), as TF.
        """
        if isinstance(server_or_cluster_def, tensorflow_server_pb2.ServerDef):
            server_def = server_or_cluster_def
            cluster = ClusterSpec(server_def.cluster)
            job_name = job_name or server_def.job_name
            task_index = server_def.task_index if task_index is None else task_index
            protocol = protocol or server_def.protocol
            if config is None and server_def.HasField("default_session_config"):
                config = server_def.default_session_config
        else:
            cluster = ClusterSpec(server_or_cluster_def)
        if protocol not in (None, "", "grpc"):
            raise ValueError(f"Unsupported protocol {protocol!r}; tensorflux speaks 'grpc'.")
        if job_name is None:
            if len(cluster.jobs) != 1:
                raise ValueError("Must specify an explicit `job_name` for a cluster with "
                                 f"several jobs: {cluster.jobs}")
            job_name = cluster.jobs[0]
        if task_index is None:
            indices = cluster.task_indices(job_name)
            if len(indices) != 1:
                raise ValueError("Must specify an explicit `task_index` for a job with "
                                 "several tasks.")
            task_index = indices[0]
        self._config = config or config_pb2.ConfigProto()
        self._security = security if security is not None else \
            security_mod.RpcSecurity.from_env()
        self._bind_address = bind_address
        self._bound = None
        self._job = job_name
        self._task_index = int(task_index)
        self._cluster = cluster
        self._address = cluster.task_address(job_name, self._task_index)
        self.task_name = f"/job:{job_name}/replica:0/task:{self._task_index}"
        cpus = int(self._config.device_count.get("CPU", 1)) or 1
        self._devices = local_devices(job_name, self._task_index, cpus)
        # The task's thread budget (ConfigProto intra/inter-op; `--threads` sets its cores).
        self._threads = thread_budget.SessionThreads(
            self._config, one_host_cores(cluster, job_name, self._config))
        self._clients: dict = {}
        self._clients_lock = threading.Lock()
        self._force_rpc = bool(self._config.rpc_options.use_rpc_for_inprocess_master)
        self.worker = Worker(self.task_name, self._devices, self.client_for,
                             shutdown=self._shutdown_later)
        self.master = Master(self, default_timeout=self._default_timeout())
        # Collective ops on this task's devices meet their peers through this server.
        self._collectives = TaskCollectives(self.worker, lambda: self._cluster, self.client_for,
                                            self._default_timeout())
        self._grpc = None
        self._stopped = threading.Event()
        self._started = False
        if start:
            self.start()

    def _default_timeout(self) -> float:
        ms = self._config.operation_timeout_in_ms
        return ms / 1000.0 if ms > 0 else 10.0

    # -- properties ------------------------------------------------------------------------

    @property
    def target(self) -> str:
        return f"grpc://{self._address}"

    @property
    def server_def(self):
        return tensorflow_server_pb2.ServerDef(
            cluster=self._cluster.as_cluster_def(), job_name=self._job,
            task_index=self._task_index, protocol="grpc", default_session_config=self._config)

    @property
    def security(self):
        """The `RpcSecurity` this server and its clients use."""
        return self._security

    @property
    def bound_address(self) -> str:
        """The 'host:port' the server listens on (None before `start()`)."""
        return self._bound

    @property
    def cluster_spec(self) -> ClusterSpec:
        return self._cluster

    @property
    def devices(self) -> list:
        return list(self._devices)

    def cluster_tasks(self) -> list:
        return self._cluster.task_names()

    def _address_of(self, task: str) -> str:
        parts = dict(p.split(":", 1) for p in task.strip("/").split("/"))
        return self._cluster.task_address(parts["job"], int(parts["task"]))

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Starts serving (binds the task's address; port 0 picks a free port)."""
        if self._started:
            return

        transfers.tune_allocator()
        host, _, port = self._address.rpartition(":")
        if not (host and port.isdigit() and int(port) <= 65535):  # gRPC: port modulo 65536
            raise errors.InvalidArgumentError(  # TF's message
                None, None, f"Could not parse port for local server from \"{self._address}\" "
                f"(task /job:{self._job}/task:{self._task_index}): expected 'host:port' with "
                "a port in 0..65535")
        bind = bind_address_for(self._address, self._bind_address)
        try:
            self._grpc, port = start_grpc_server(self.worker, self.master, bind,
                                                 security=self._security)
        except errors.UnknownError as err:
            raise errors.UnknownError(None, None, err.message + _double_bind_hint()) \
                from None
        self._bound = f"{bind.rpartition(':')[0]}:{port}"
        if self._address.endswith(":0"):
            self._address = f"{host or 'localhost'}:{port}"
            jobs = self._cluster.as_dict()
            tasks = jobs[self._job]
            if isinstance(tasks, list):
                tasks[self._task_index] = self._address
            else:
                tasks[self._task_index] = self._address
            self._cluster = ClusterSpec(jobs)
        with _LOCAL_LOCK:
            _LOCAL_SERVERS[_normalize(self._address)] = self
        security_mod.register_addresses(self._cluster_addresses(), self._security)
        collective_exchange.register_executor(self.task_name, self._collectives)
        self._started = True
        logging.info(f"Started server {self.task_name} at {self._address}")

    def join(self) -> None:
        """Blocks until the server stops (by `stop()` or a shutdown request)."""
        self._stopped.wait()

    def stop(self, grace: float = 0.5) -> None:
        """Stops serving, cancels running steps and frees the task's state."""
        if self._stopped.is_set():
            return
        with _LOCAL_LOCK:
            if _LOCAL_SERVERS.get(_normalize(self._address)) is self:
                del _LOCAL_SERVERS[_normalize(self._address)]
        security_mod.unregister_addresses(self._cluster_addresses(), self._security)
        collective_exchange.unregister_executor(self.task_name, self._collectives)
        self.worker.close()
        self.master.close()
        if self._grpc is not None:
            self._grpc.stop(grace).wait(grace + 1.0)
        with self._clients_lock:
            for client in self._clients.values():
                close = getattr(client, "close", None)
                if close is not None:
                    close()
            self._clients.clear()
        for device in self._devices:
            device.resource_mgr.clear()
        self._threads.close()
        self._stopped.set()

    def _cluster_addresses(self) -> list:
        return [self._cluster.task_address(job, index) for job in self._cluster.jobs
                for index in self._cluster.task_indices(job)]

    def _shutdown_later(self, grace: float) -> None:
        time.sleep(min(grace, 5.0))
        self.stop()

    # -- peers -----------------------------------------------------------------------------

    def client_for(self, task: str):
        """The worker client of `task`: in-process for this process's servers, else gRPC."""
        with self._clients_lock:
            client = self._clients.get(task)
            if client is not None:
                return client
            address = self._address_of(task)
            if not self._force_rpc and task == self.task_name:
                client = transport.InProcessWorkerClient(self.worker, task, address)
            else:
                other = None if self._force_rpc else local_server(_normalize(address))
                if other is not None:
                    client = transport.InProcessWorkerClient(other.worker, task, address)
                else:
                    client = transport.GrpcWorkerClient(task, address,
                                                        self._default_timeout(),
                                                        security=self._security)
            self._clients[task] = client
            return client

    @staticmethod
    def create_local_server(config=None, start=True) -> Server:
        """A single-task server on localhost with a port chosen by the OS."""
        return Server({"localhost": ["localhost:0"]}, protocol="grpc", config=config,
                      start=start)


def _double_bind_hint() -> str:
    import os

    if os.environ.get("TFX_SERVERS_RUNNING") == "1":
        return (" This program runs under `tensorflux cluster`, which already started the "
                "cluster's servers: connect to them with tf.Session('grpc://<address>') (see "
                "TFX_CLUSTER), or run `tensorflux cluster --no-servers` to start your own.")
    return ""


def shutdown_cluster(target_or_cluster, timeout: float = 5.0, security=None) -> None:
    """Asks every task of a cluster to stop (e.g. the chief at the end of training).

    `security` (an `RpcSecurity`) defaults to that of a server of this process in the
    cluster, else the TFX_* environment."""

    cluster = target_or_cluster if isinstance(target_or_cluster, ClusterSpec) else \
        ClusterSpec(target_or_cluster)
    failures = []
    for job in cluster.jobs:
        for index in cluster.task_indices(job):
            task = f"/job:{job}/replica:0/task:{index}"
            address = cluster.task_address(job, index)
            client = transport.GrpcWorkerClient(task, address, timeout, security=security)
            try:
                client.call("shutdown", worker_pb2.ShutdownRequest(grace_secs=0.2))
            except errors.OpError as err:
                failures.append(f"{task}: {err.message}")
            finally:
                client.close()
    if failures:
        raise errors.UnavailableError(None, None, "Could not shut down: " + "; ".join(failures))
