"""Binding: the spec's IP literal is bound (not every interface), a port is bound once (a
second server fails at once with a typed error naming the port instead of hanging)."""

import socket
import time

import pytest

import tensorflux as tf
from tensorflux.distributed.server import Server, bind_address_for
from tensorflux.framework import errors


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_bind_address_rules():
    assert bind_address_for("localhost:2222") == "127.0.0.1:2222"
    assert bind_address_for("10.9.9.9:2222") == "10.9.9.9:2222"
    assert bind_address_for("[fe80::1]:2222") == "[fe80::1]:2222"
    assert bind_address_for("[::1]:2222") == "[::1]:2222"
    assert bind_address_for("ps-0.cluster.local:2222") == "0.0.0.0:2222"
    assert bind_address_for("10.9.9.9:2222", "0.0.0.0") == "0.0.0.0:2222"
    assert bind_address_for("ps-0:2222", "192.168.1.4:3333") == "192.168.1.4:3333"
    assert bind_address_for("ps-0:2222", "[::]") == "[::]:2222"


def test_ip_literal_task_binds_only_that_address():
    port = _free_port()
    server = Server({"w": [f"127.0.0.2:{port}"]})
    try:
        assert server.bound_address == f"127.0.0.2:{port}"
        with socket.create_connection(("127.0.0.2", port), timeout=2):
            pass
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
    finally:
        server.stop()


def test_second_server_on_a_port_fails_at_once_naming_it(monkeypatch):
    port = _free_port()
    spec = {"worker": [f"localhost:{port}"]}
    first = Server(spec)
    try:
        start = time.monotonic()
        with pytest.raises(errors.UnknownError, match=f"port {port} is in use"):
            Server(spec)
        monkeypatch.setenv("TFX_SERVERS_RUNNING", "1")
        with pytest.raises(errors.UnknownError, match="--no-servers"):
            Server(spec)
        assert time.monotonic() - start < 2.0
        with tf.Graph().as_default():  # the first server is unaffected
            with tf.Session(first.target) as sess:
                assert sess.run(tf.constant(2.0) * 3.0) == 6.0
    finally:
        first.stop()


def test_cli_warns_when_a_public_address_is_unprotected():
    from tensorflux.cli import security_warning
    from tensorflux.distributed.rpc.security import RpcSecurity

    assert security_warning("10.1.2.3:2222", RpcSecurity()).startswith("WARNING")
    assert "0.0.0.0" in security_warning("ps-0:2222", RpcSecurity())
    assert security_warning("localhost:2222", RpcSecurity()) is None
    assert security_warning("10.1.2.3:2222", RpcSecurity(token="t")) is None
    assert security_warning("127.0.0.1:2", RpcSecurity(), bind="0.0.0.0:2") is not None
