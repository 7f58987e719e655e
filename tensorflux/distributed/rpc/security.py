"""Who may talk to a server: TLS credentials, a shared cluster token, message limits.

`RpcSecurity` is set once for a cluster, explicitly (`tf.train.Server(..., security=...)`,
the `tensorflux server` flags) or from the environment (`RpcSecurity.from_env()`):

    TFX_CLUSTER_TOKEN      shared secret sent as gRPC metadata on every RPC and checked by
                           every server (constant-time compare)
    TFX_CLUSTER_TOKEN_FILE a file holding the token (first line), instead of the variable
    TFX_TLS_CERT, TFX_TLS_KEY   PEM certificate chain and private key of this task (servers
                           present them; with mutual TLS clients present them too)
    TFX_TLS_CA             PEM CA bundle that peers' certificates must chain to
    TFX_TLS_MUTUAL         "1": servers require a client certificate signed by TFX_TLS_CA
    TFX_TLS_SERVER_NAME    the name to check in servers' certificates instead of the host
    TFX_MAX_MESSAGE_BYTES  the largest gRPC message sent or received (default 2 GiB - 1)

Contract: a server with a token refuses every RPC (Shutdown and Reset included) that lacks it
(`UNAUTHENTICATED`) or carries another one (`PERMISSION_DENIED`); clients raise them as
`UnauthenticatedError` / `PermissionDeniedError`. Everything is off by default: a cluster on
loopback needs nothing. Clients (a `tf.Session(target)`, a master reaching workers) take the
security of a server of this process that lists the target's address, else the environment.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import threading
from dataclasses import dataclass

from tensorflux.framework import errors

__all__ = ["RpcSecurity", "TOKEN_METADATA_KEY", "DEFAULT_MAX_MESSAGE_BYTES", "for_address",
           "register_addresses", "unregister_addresses", "is_loopback"]

TOKEN_METADATA_KEY = "tfx-cluster-token"
DEFAULT_MAX_MESSAGE_BYTES = (1 << 31) - 1


def _read(path: str | None, what: str) -> bytes | None:
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as err:
        raise errors.NotFoundError(None, None, f"Cannot read the {what} file {path!r}: "
                                   f"{err.strerror}") from None


@dataclass(frozen=True)
class RpcSecurity:
    """TLS and token settings of a cluster's RPCs (see the module docstring).

    Args:
        token: the shared cluster token (None: no token check).
        tls_cert, tls_key: PEM files of this task's certificate chain and private key.
        tls_ca: PEM file of the CA bundle peers must chain to.
        mutual_tls: servers require client certificates (clients then need cert and key).
        server_name: the host name to verify in servers' certificates (default: the host).
        max_message_bytes: the largest gRPC message sent or received.
    """

    token: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_ca: str | None = None
    mutual_tls: bool = False
    server_name: str | None = None
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES

    def __post_init__(self):
        if bool(self.tls_cert) != bool(self.tls_key):
            raise ValueError("RpcSecurity: tls_cert and tls_key go together (both PEM files).")
        if self.mutual_tls and not (self.tls_ca and self.tls_cert):
            raise ValueError("RpcSecurity: mutual_tls needs tls_ca, tls_cert and tls_key.")
        if self.token is not None and not self.token:
            raise ValueError("RpcSecurity: an empty token; use None for no token.")
        if not 0 < int(self.max_message_bytes) <= DEFAULT_MAX_MESSAGE_BYTES:
            raise ValueError(f"RpcSecurity: max_message_bytes must be in "
                             f"(0, {DEFAULT_MAX_MESSAGE_BYTES}], got {self.max_message_bytes}")

    def __repr__(self) -> str:  # never print the secret
        token = "set" if self.token else None
        return (f"RpcSecurity(token={token}, tls_cert={self.tls_cert!r}, tls_ca={self.tls_ca!r}, "
                f"mutual_tls={self.mutual_tls}, max_message_bytes={self.max_message_bytes})")

    @classmethod
    def from_env(cls, environ=None) -> RpcSecurity:
        """The settings the TFX_* environment variables give (module docstring)."""
        env = os.environ if environ is None else environ
        token = env.get("TFX_CLUSTER_TOKEN") or None
        token_file = env.get("TFX_CLUSTER_TOKEN_FILE")
        if token is None and token_file:
            lines = (_read(token_file, "cluster token") or b"").decode("utf-8", "replace")
            first = lines.splitlines()[0].strip() if lines.strip() else ""
            token = first or None
        limit = env.get("TFX_MAX_MESSAGE_BYTES")
        return cls(token=token, tls_cert=env.get("TFX_TLS_CERT") or None,
                   tls_key=env.get("TFX_TLS_KEY") or None, tls_ca=env.get("TFX_TLS_CA") or None,
                   mutual_tls=env.get("TFX_TLS_MUTUAL", "") in ("1", "true", "yes"),
                   server_name=env.get("TFX_TLS_SERVER_NAME") or None,
                   max_message_bytes=int(limit) if limit else DEFAULT_MAX_MESSAGE_BYTES)

    @property
    def uses_tls(self) -> bool:
        return bool(self.tls_cert or self.tls_ca)

    @property
    def restricts_access(self) -> bool:
        """True when a peer needs a token or a client certificate to be served."""
        return bool(self.token) or self.mutual_tls

    def metadata(self) -> tuple:
        """The metadata every client call carries."""
        return ((TOKEN_METADATA_KEY, self.token),) if self.token else ()

    def grpc_options(self) -> list:
        limit = int(self.max_message_bytes)
        options = [("grpc.max_send_message_length", limit),
                   ("grpc.max_receive_message_length", limit)]
        if self.server_name:
            options.append(("grpc.ssl_target_name_override", self.server_name))
        return options

    def server_credentials(self):
        """gRPC server credentials, or None for a plaintext port."""
        if not self.tls_cert:
            if self.tls_ca:
                raise ValueError("RpcSecurity: a TLS server needs tls_cert and tls_key.")
            return None
        import grpc

        return grpc.ssl_server_credentials(
            [(_read(self.tls_key, "TLS key"), _read(self.tls_cert, "TLS certificate"))],
            root_certificates=_read(self.tls_ca, "TLS CA"),
            require_client_auth=self.mutual_tls)

    def channel_credentials(self):
        """gRPC channel credentials, or None for a plaintext channel."""
        if not self.uses_tls:
            return None
        import grpc

        return grpc.ssl_channel_credentials(
            root_certificates=_read(self.tls_ca, "TLS CA"),
            private_key=_read(self.tls_key, "TLS key"),
            certificate_chain=_read(self.tls_cert, "TLS certificate"))

    def check_token(self, metadata) -> tuple | None:
        """None when `metadata` carries this token; else (grpc status code name, message)."""
        if not self.token:
            return None
        expected = self.token.encode()
        for key, value in metadata or ():
            if key == TOKEN_METADATA_KEY:
                given = value.encode() if isinstance(value, str) else bytes(value)
                if hmac.compare_digest(given, expected):
                    return None
                return ("PERMISSION_DENIED", "the cluster token of this request is wrong "
                        "(check TFX_CLUSTER_TOKEN of the client and the server)")
        return ("UNAUTHENTICATED", "this server requires a cluster token: set "
                "TFX_CLUSTER_TOKEN (or RpcSecurity(token=...)) in the client to the cluster's "
                "token")


def open_channel(address: str, security: RpcSecurity, options: list):
    """A gRPC channel to `address`: TLS when `security` uses it, else plaintext."""
    import grpc

    options = options + security.grpc_options()
    credentials = security.channel_credentials()
    if credentials is None:
        return grpc.insecure_channel(address, options=options)
    return grpc.secure_channel(address, credentials, options=options)


def is_loopback(host: str) -> bool:
    """True for localhost and loopback IP literals (what `tensorflux server` need not protect)."""
    host = host.strip("[]")
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_REGISTERED: dict = {}
_LOCK = threading.Lock()


def _key(address: str) -> str:
    host, _, port = address.rpartition(":")
    if is_loopback(host) or host == "0.0.0.0":
        host = "localhost"
    return f"{host}:{port}"


def register_addresses(addresses, security: RpcSecurity) -> None:
    """Clients of this process reaching one of `addresses` use `security` (a Server's)."""
    with _LOCK:
        for address in addresses:
            _REGISTERED[_key(address)] = security


def unregister_addresses(addresses, security: RpcSecurity) -> None:
    with _LOCK:
        for address in addresses:
            if _REGISTERED.get(_key(address)) is security:
                del _REGISTERED[_key(address)]


def for_address(address: str) -> RpcSecurity:
    """The security a client of this process uses for `address` (module docstring)."""
    with _LOCK:
        found = _REGISTERED.get(_key(address))
    return found if found is not None else RpcSecurity.from_env()
