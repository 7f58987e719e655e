"""The client side of `tf.Session('grpc://host:port')`: ships the graph, runs steps remotely.

The graph goes to the master as a GraphDef on the first run (CreateSession) and then only its
new ops (ExtendSession: graphs only grow). Each `run` is one RunStep with feeds and fetches by
name. A server in this process is reached in-process (its master object, with ndarrays in and
out), as TensorFlow's local master does, unless the config asks for RPC.
"""

from __future__ import annotations

from tensorflux.distributed import status as status_mod
from tensorflux.distributed.rpc import transport
from tensorflux.distributed.rpc.tensor_codec import decode_tensor, encode_tensor
from tensorflux.distributed.server import _normalize, local_server
from tensorflux.framework import errors
from tensorflux.protos import master_pb2
from tensorflux.runtime.device_attributes import DeviceAttributes
from tensorflux.runtime.session import register_target


class _RemotePlan:
    __slots__ = ("feeds", "fetches", "targets", "copy_flags")

    def __init__(self, feeds, fetches, targets):
        self.feeds = feeds
        self.fetches = fetches
        self.targets = targets
        self.copy_flags = [False] * len(fetches)


def _check_port(target: str, address: str) -> None:
    """A numeric port outside 0..65535 (gRPC would silently take it modulo 65536 and report
    an error about another port)."""
    port = address.rpartition(":")[2]
    if port.isdigit() and int(port) > 65535:
        raise errors.InvalidArgumentError(
            None, None, f"Session target {target!r}: port {port} is out of range (0..65535)")


class GrpcSessionBackend:
    """A Session backend talking to a master service (see the module docstring)."""

    fills_metadata = True

    def __init__(self, target: str, graph, config):
        self.graph = graph
        self.config = config
        self.address = target[len("grpc://"):]
        _check_port(target, self.address)
        force_rpc = bool(config is not None and config.rpc_options.use_rpc_for_inprocess_master)
        server = None if force_rpc else local_server(_normalize(self.address))
        timeout = config.operation_timeout_in_ms / 1000.0 if config is not None and \
            config.operation_timeout_in_ms > 0 else 10.0
        self._timeout = timeout
        self._local = server is not None
        if server is not None:
            self._client = transport.InProcessMasterClient(server.master)
        else:
            self._client = transport.GrpcMasterClient(self.address, timeout)
        self._handle = None
        self._sent = 0
        self._closed = False

    def _sync_graph(self) -> None:
        graph = self.graph
        if self._handle is not None and graph._last_id <= self._sent:
            return
        last = graph._last_id
        graph_def = graph.as_graph_def(from_version=self._sent)
        if self._handle is None:
            request = master_pb2.CreateSessionRequest(graph_def=graph_def, config=self.config,
                                                      target=self.address)
            response = self._client.call("create_session", request, timeout=self._timeout * 3)
            status_mod.raise_if_error(response.status, f"creating a session at {self.address}")
            self._handle = response.session_handle
        else:
            request = master_pb2.ExtendSessionRequest(session_handle=self._handle,
                                                      graph_def=graph_def)
            response = self._client.call("extend_session", request)
            status_mod.raise_if_error(response.status)
        self._sent = last

    @property
    def devices(self) -> list:
        response = self._client.call("list_devices", master_pb2.ListDevicesRequest())
        status_mod.raise_if_error(response.status)
        return [DeviceAttributes(a.name, a.device_type, a.memory_limit, a.incarnation)
                for a in list(response.local_device) + list(response.remote_device)]

    def get_plan(self, feeds, fetches, targets, traced):
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        self._sync_graph()
        return _RemotePlan(tuple(t.name for t in feeds), tuple(t.name for t in fetches),
                           tuple(op.name for op in targets))

    def run_step(self, plan, feed_values, options=None, run_metadata=None):
        if self._local:
            values, metadata = self._client.run_step_local(
                self._handle, plan.feeds, feed_values, plan.fetches, plan.targets, options)
            if run_metadata is not None and metadata is not None:
                run_metadata.MergeFrom(metadata)
            return values
        request = master_pb2.RunStepRequest(session_handle=self._handle)
        for name, value in zip(plan.feeds, feed_values):
            encode_tensor(value, request.feed.add(name=name).tensor)
        request.fetch.extend(plan.fetches)
        request.target.extend(plan.targets)
        if options is not None:
            request.options.CopyFrom(options)
        response = self._client.call("run_step", request,
                                     timeout=_step_deadline(options, self.config))
        status_mod.raise_if_error(response.status)
        by_name = {item.name: decode_tensor(item.tensor) for item in response.tensor}
        if run_metadata is not None and response.HasField("metadata"):
            run_metadata.MergeFrom(response.metadata)
        return [by_name[name] for name in plan.fetches]

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._handle is not None:
            try:
                self._client.call("close_session",
                                  master_pb2.CloseSessionRequest(session_handle=self._handle),
                                  timeout=2.0)
            except errors.OpError:
                pass


# The server ends a step at its deadline and says so; the call waits a little longer.
STEP_DEADLINE_GRACE_SECS = 2.0


def _step_deadline(options, config):
    """RunStep's deadline: the step's own (RunOptions.timeout_in_ms, else the session's
    operation_timeout_in_ms) plus a grace, or none: a step may wait in a dequeue for as long
    as it takes, and health checks bound how long a failure takes to be noticed."""
    if options is not None and options.timeout_in_ms > 0:
        return options.timeout_in_ms / 1000.0 + STEP_DEADLINE_GRACE_SECS
    if config is not None and config.operation_timeout_in_ms > 0:
        return config.operation_timeout_in_ms / 1000.0 + STEP_DEADLINE_GRACE_SECS
    return None


def _reset(target, containers, config):
    backend = GrpcSessionBackend(target, None, config)
    response = backend._client.call("reset", master_pb2.ResetRequest(
        container=list(containers or [])))
    status_mod.raise_if_error(response.status)


def register() -> None:
    register_target("grpc://", GrpcSessionBackend, _reset)
