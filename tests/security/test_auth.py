"""Cluster token and TLS: refused without credentials, served with them; master -> worker
and worker -> worker RPCs carry them too."""

import datetime
import ipaddress

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.distributed.rpc.security import RpcSecurity
from tensorflux.distributed.rpc.transport import GrpcMasterClient, GrpcWorkerClient
from tensorflux.distributed.server import Server
from tensorflux.framework import errors
from tensorflux.protos import master_pb2, worker_pb2

TOKEN = "cluster-secret-7f3a"


def _address(server):
    return server.target[len("grpc://"):]


def _local(security):
    return Server({"localhost": ["localhost:0"]}, security=security)


def _status(security, address):
    client = GrpcWorkerClient("/job:localhost/replica:0/task:0", address, 3.0, security=security)
    try:
        return client.call("get_status", worker_pb2.GetStatusRequest())
    finally:
        client.close()


def test_token_refused_without_it_and_when_wrong_accepted_when_right():
    server = _local(RpcSecurity(token=TOKEN))
    address = _address(server)
    try:
        with pytest.raises(errors.UnauthenticatedError, match="requires a cluster token"):
            _status(RpcSecurity(), address)
        with pytest.raises(errors.PermissionDeniedError, match="token of this request is wrong"):
            _status(RpcSecurity(token="guess"), address)
        assert len(_status(RpcSecurity(token=TOKEN), address).device_attributes) == 1
        master = GrpcMasterClient(address, 3.0, security=RpcSecurity())
        with pytest.raises(errors.UnauthenticatedError):
            master.call("reset", master_pb2.ResetRequest())
        with pytest.raises(errors.UnauthenticatedError):
            master.call("create_session", master_pb2.CreateSessionRequest())
        master.close()
        # Shutdown obeys the same check: the server is still serving after a refused one.
        client = GrpcWorkerClient("/job:localhost/replica:0/task:0", address, 3.0,
                                  security=RpcSecurity())
        with pytest.raises(errors.UnauthenticatedError):
            client.call("shutdown", worker_pb2.ShutdownRequest(grace_secs=0.0))
        client.close()
        assert len(_status(RpcSecurity(token=TOKEN), address).device_attributes) == 1
    finally:
        server.stop()


def test_session_target_takes_the_token_from_the_environment(monkeypatch):
    server = _local(RpcSecurity(token=TOKEN))
    config = tf.ConfigProto()
    config.rpc_options.use_rpc_for_inprocess_master = True
    try:
        with tf.Graph().as_default():
            y = tf.constant([1.0, 2.0]) * 2.0
            # The server registered its security for its address: this process's clients
            # use it. A client elsewhere reads TFX_CLUSTER_TOKEN.
            with tf.Session(server.target, config=config) as sess:
                np.testing.assert_allclose(sess.run(y), [2.0, 4.0])
        from tensorflux.distributed.rpc import security

        security.unregister_addresses([_address(server)], server.security)
        monkeypatch.delenv("TFX_CLUSTER_TOKEN", raising=False)
        with tf.Graph().as_default():
            y = tf.constant(1.0)
            with pytest.raises(errors.UnauthenticatedError):
                with tf.Session(server.target, config=config) as sess:
                    sess.run(y)
        monkeypatch.setenv("TFX_CLUSTER_TOKEN", TOKEN)
        with tf.Graph().as_default():
            y = tf.constant(3.0) + 1.0
            with tf.Session(server.target, config=config) as sess:
                assert sess.run(y) == 4.0
    finally:
        server.stop()


def test_two_task_cluster_with_token_runs_steps_over_grpc():
    """Master -> worker (RunGraph) and worker -> worker (RecvTensor) carry the token."""
    import socket

    ports = []
    for _ in range(2):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            ports.append(sock.getsockname()[1])
    spec = tf.train.ClusterSpec({"ps": [f"localhost:{ports[0]}"],
                                 "worker": [f"localhost:{ports[1]}"]})
    config = tf.ConfigProto()
    config.rpc_options.use_rpc_for_inprocess_master = True
    security = RpcSecurity(token=TOKEN)
    ps = Server(spec, "ps", 0, config=config, security=security)
    worker = Server(spec, "worker", 0, config=config, security=security)
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                a = tf.constant(np.arange(4, dtype=np.float32))
            with tf.device("/job:worker/task:0"):
                b = a * 2.0
            with tf.Session(worker.target, config=config) as sess:
                np.testing.assert_allclose(sess.run(b), [0, 2, 4, 6])
        with pytest.raises(errors.UnauthenticatedError):
            _status(RpcSecurity(), _address(ps))
    finally:
        worker.stop()
        ps.stop()


# -- TLS ----------------------------------------------------------------------------------

def _pki(tmp_path):
    """A self-signed CA, a server/client certificate for localhost signed by it, and an
    unrelated CA: PEM files under tmp_path."""
    x509 = pytest.importorskip(
        "cryptography.x509", reason="TLS tests need the `cryptography` package (test extra)")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def name(text):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    def write(path, data):
        path.write_bytes(data)
        return str(path)

    def key_pem(key):
        return key.private_bytes(serialization.Encoding.PEM,
                                 serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())

    def ca(label):
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (x509.CertificateBuilder().subject_name(name(label)).issuer_name(name(label))
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5))
                .not_valid_after(now + datetime.timedelta(days=1))
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .sign(key, hashes.SHA256()))
        return key, cert

    ca_key, ca_cert = ca("tensorflux test CA")
    _, other_cert = ca("another CA")
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(name("localhost"))
            .issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"),
                 x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    return {"ca": write(tmp_path / "ca.pem", ca_cert.public_bytes(pem)),
            "other_ca": write(tmp_path / "other.pem", other_cert.public_bytes(pem)),
            "cert": write(tmp_path / "task.pem", cert.public_bytes(pem)),
            "key": write(tmp_path / "task.key", key_pem(key))}


def test_tls_server_refuses_plaintext_and_untrusted_clients(tmp_path):
    pki = _pki(tmp_path)
    server = _local(RpcSecurity(tls_cert=pki["cert"], tls_key=pki["key"], tls_ca=pki["ca"],
                                token=TOKEN))
    address = _address(server)
    try:
        trusted = RpcSecurity(tls_ca=pki["ca"], token=TOKEN)
        assert len(_status(trusted, address).device_attributes) == 1
        with pytest.raises(errors.UnavailableError):
            _status(RpcSecurity(token=TOKEN), address)  # plaintext to a TLS port
        with pytest.raises(errors.UnavailableError):
            _status(RpcSecurity(tls_ca=pki["other_ca"], token=TOKEN), address)
        with pytest.raises(errors.UnauthenticatedError):
            _status(RpcSecurity(tls_ca=pki["ca"]), address)  # TLS but no token
    finally:
        server.stop()


def test_mutual_tls_requires_a_client_certificate(tmp_path):
    pki = _pki(tmp_path)
    full = RpcSecurity(tls_cert=pki["cert"], tls_key=pki["key"], tls_ca=pki["ca"],
                       mutual_tls=True)
    server = _local(full)
    address = _address(server)
    try:
        assert len(_status(full, address).device_attributes) == 1
        with pytest.raises(errors.UnavailableError):
            _status(RpcSecurity(tls_ca=pki["ca"]), address)  # no client certificate
        config = tf.ConfigProto()
        config.rpc_options.use_rpc_for_inprocess_master = True
        with tf.Graph().as_default():
            y = tf.constant([1.0, 2.0]) + 1.0
            with tf.Session(server.target, config=config) as sess:
                np.testing.assert_allclose(sess.run(y), [2.0, 3.0])
    finally:
        server.stop()


def test_security_from_environment_and_validation(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("from-file\n")
    security = RpcSecurity.from_env({"TFX_CLUSTER_TOKEN_FILE": str(token_file),
                                     "TFX_TLS_CA": "/ca.pem", "TFX_MAX_MESSAGE_BYTES": "1024"})
    assert security.token == "from-file" and security.tls_ca == "/ca.pem"
    assert security.max_message_bytes == 1024
    assert "from-file" not in repr(security)
    assert RpcSecurity.from_env({}) == RpcSecurity()
    with pytest.raises(ValueError, match="tls_cert and tls_key"):
        RpcSecurity(tls_cert="a.pem")
    with pytest.raises(ValueError, match="mutual_tls"):
        RpcSecurity(mutual_tls=True)
    with pytest.raises(ValueError, match="max_message_bytes"):
        RpcSecurity(max_message_bytes=0)
    with pytest.raises(errors.NotFoundError, match="Cannot read the TLS"):
        RpcSecurity(tls_cert=str(tmp_path / "missing.pem"),
                    tls_key=str(tmp_path / "k")).server_credentials()
