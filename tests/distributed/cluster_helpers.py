"""Loopback clusters for the distributed tests: free ports on 127.0.0.1 and a ClusterSpec."""

import socket

import tensorflux as tf


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_cluster(ps=1, workers=2):
    return tf.train.ClusterSpec({
        "ps": [f"localhost:{free_port()}" for _ in range(ps)],
        "worker": [f"localhost:{free_port()}" for _ in range(workers)]})
