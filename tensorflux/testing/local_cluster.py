"""`tf.test.create_local_cluster`: an in-process cluster of worker and ps servers on loopback."""

from __future__ import annotations

import socket

from tensorflux.distributed.cluster_spec import ClusterSpec
from tensorflux.distributed.server import Server
from tensorflux.framework import errors

__all__ = ["create_local_cluster"]

_ATTEMPTS = 3


def _free_ports(count: int) -> list:
    """`count` distinct ports the OS handed out on 127.0.0.1 (bound with port 0, released)."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def create_local_cluster(num_workers, num_ps, protocol="grpc", worker_config=None,
                         ps_config=None):
    """Starts `num_workers` worker and `num_ps` ps servers in this process, on 127.0.0.1.

    Every task knows every other's address before any server starts, so the ports are taken
    from the OS up front (binding port 0); if one is taken meanwhile, the cluster is retried.

    Args:
        num_workers: number of worker tasks (>= 1).
        num_ps: number of ps tasks (>= 0).
        protocol: "grpc".
        worker_config, ps_config: `ConfigProto`s of the worker and ps servers.

    Returns:
        `(workers, ps_servers)`: lists of started `tf.train.Server`s; a session on
        `workers[0].target` can place ops on `/job:ps/task:i` and `/job:worker/task:i`.

    Raises:
        ValueError: `num_workers` < 1 or `num_ps` < 0.
    """
    if num_workers < 1 or num_ps < 0:
        raise ValueError(f"create_local_cluster needs num_workers >= 1 and num_ps >= 0, got "
                         f"{num_workers} and {num_ps}")
    for attempt in range(_ATTEMPTS):
        ports = _free_ports(num_workers + num_ps)
        spec = {"worker": [f"localhost:{port}" for port in ports[:num_workers]]}
        if num_ps:
            spec["ps"] = [f"localhost:{port}" for port in ports[num_workers:]]
        cluster = ClusterSpec(spec)
        started = []
        try:
            workers = []
            for index in range(num_workers):
                workers.append(Server(cluster, job_name="worker", task_index=index,
                                      protocol=protocol, config=worker_config, start=True))
                started.append(workers[-1])
            ps_servers = []
            for index in range(num_ps):
                ps_servers.append(Server(cluster, job_name="ps", task_index=index,
                                         protocol=protocol, config=ps_config, start=True))
                started.append(ps_servers[-1])
            return workers, ps_servers
        except errors.UnavailableError:
            for server in started:
                server.stop()
            if attempt == _ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")
