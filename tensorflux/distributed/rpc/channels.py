"""gRPC channel settings and liveness: how channels connect, ping and fail.

A channel retries a lost connection within about a second, so a restarted task is reachable
again as soon as it listens. A worker channel pings its peer with HTTP/2 keepalive pings,
answered by the peer's gRPC core without its Python code: a peer that does not answer within
`KEEPALIVE_TIMEOUT_MS` has its transport closed, and `translate` turns the failed calls into
UnavailableError marked unresponsive (`task_health` adds GetStatus questions for a task whose
Python is only slow). `translate` maps every failed call to the framework's error classes,
naming the task and its address.
"""

from __future__ import annotations

import grpc

from tensorflux.framework import errors

# Message size limits come from `RpcSecurity.grpc_options()` (2 GiB - 1 by default).
GRPC_OPTIONS = [
    ("grpc.enable_retries", 0),
    # A lost peer is retried quickly (gRPC's default backoff grows to two minutes), so a
    # restarted task is reachable as soon as it listens again.
    ("grpc.initial_reconnect_backoff_ms", 100), ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]
# A worker channel pings its peer (HTTP/2 PING, answered by the peer's gRPC core without its
# Python code): a peer that does not answer within KEEPALIVE_TIMEOUT_MS (stopped, frozen, cut
# off) has its transport closed, so its calls fail with UNAVAILABLE within about 2 s, while a
# peer that is only slow to run Python under CPU load keeps its calls (task_health).
KEEPALIVE_TIME_MS = 500
KEEPALIVE_TIMEOUT_MS = 1500
KEEPALIVE_OPTIONS = [
    ("grpc.keepalive_time_ms", KEEPALIVE_TIME_MS),
    ("grpc.keepalive_timeout_ms", KEEPALIVE_TIMEOUT_MS),
    ("grpc.http2.ping_timeout_ms", KEEPALIVE_TIMEOUT_MS),  # the ack timer of each ping
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
]
# What a server accepts from such clients (its default answers frequent pings with GOAWAY).
PING_POLICY_OPTIONS = [
    ("grpc.http2.min_recv_ping_interval_without_data_ms", KEEPALIVE_TIME_MS // 2),
    ("grpc.http2.min_ping_interval_without_data_ms", KEEPALIVE_TIME_MS // 2),
    ("grpc.http2.max_ping_strikes", 0),
]


def _refusals() -> dict:
    return {grpc.StatusCode.UNAUTHENTICATED: errors.UnauthenticatedError,
            grpc.StatusCode.PERMISSION_DENIED: errors.PermissionDeniedError,
            grpc.StatusCode.RESOURCE_EXHAUSTED: errors.ResourceExhaustedError,
            grpc.StatusCode.INVALID_ARGUMENT: errors.InvalidArgumentError}


_REFUSALS = _refusals()


def translate(err, task, address, what):
    """The framework error for the failed gRPC call `what` to `task` at `address`."""
    code = err.code() if hasattr(err, "code") else None
    detail = err.details() if hasattr(err, "details") else str(err)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        error = errors.DeadlineExceededError(
            None, None, f"{what} to task {task} at {address} timed out: {detail}")
    elif code == grpc.StatusCode.CANCELLED:
        return errors.CancelledError(None, None, f"{what} to task {task} was cancelled")
    elif code == grpc.StatusCode.ABORTED:
        error = errors.AbortedError(None, None, f"{what} from task {task}: {detail}")
    elif code in _REFUSALS:
        hint = " (raise TFX_MAX_MESSAGE_BYTES, or `tensorflux server --max-message-bytes`, " \
            "on both tasks)" if "larger than max" in str(detail) else ""
        error = _REFUSALS[code](None, None, f"{what} to task {task} at {address} was refused: "
                                f"{detail}{hint}")
    elif "ping timeout" in str(detail) or "keepalive watchdog" in str(detail):
        error = errors.UnavailableError(
            None, None, f"Task {task} at {address} is unavailable: no answer to the "
            f"connection's keepalive ping (heartbeat) within {KEEPALIVE_TIMEOUT_MS / 1000:.1f}s;"
            f" the task is hung, stopped or unreachable ({what} failed: {detail})")
        error._tfx_unresponsive = True  # its master remembers the task as dead (task_health)
    else:
        error = errors.UnavailableError(
            None, None, f"Task {task} at {address} is unavailable ({what} failed: {detail})")
    error._tfx_task = task
    return error
