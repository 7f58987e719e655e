"""`tf.Session`: the client side of a step (feeds, fetches, options) over a backend.

The backend is a `DirectSession` for the embedded target `''`; other targets (`grpc://...`)
are served by factories that the distributed runtime registers with `register_target`.
"""

from __future__ import annotations

import re
import threading

import numpy as np

from tensorflux.framework import dtypes, errors, session_handles
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.session_handles import SessionValueHandle
from tensorflux.framework.tensor import Operation, Tensor
from tensorflux.framework.tensor_conversion import _string_array
from tensorflux.platform import producer_gate
from tensorflux.protos import config_pb2
from tensorflux.runtime import fetch as fetch_mod
from tensorflux.runtime.device_attributes import describe_devices
from tensorflux.runtime.direct_session import DEAD, DirectSession, StepTrace
from tensorflux.runtime.partial_run import PartialRuns
from tensorflux.runtime.step_stats import fill_run_metadata

_TARGET_FACTORIES: dict = {}


def register_target(prefix: str, factory, reset=None) -> None:
    """Registers `factory(target, graph, config) -> backend` for targets starting with prefix."""
    _TARGET_FACTORIES[prefix] = (factory, reset)


def _backend_for(target, graph, config):
    if not target:
        return DirectSession(graph, config)
    target = target.decode() if isinstance(target, bytes) else target
    for prefix, (factory, _) in _TARGET_FACTORIES.items():
        if target.startswith(prefix):
            return factory(target, graph, config)
    raise errors.InvalidArgumentError(
        None, None, f"No session factory registered for the given session options: target "
        f"{target!r}. Known targets: '' (in-process)"
        + "".join(f", {p!r}" for p in _TARGET_FACTORIES))


def _is_python_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class BaseSession:
    """A session runs steps of one graph (see `run`)."""

    def __init__(self, target="", graph=None, config=None):
        self._graph = graph if graph is not None else graph_mod.get_default_graph()
        if config is not None and not isinstance(config, config_pb2.ConfigProto):
            raise TypeError(f"config must be a tf.ConfigProto, but got {type(config)}")
        self._config = config if config is not None else config_pb2.ConfigProto()
        self._target = target
        self._backend = _backend_for(target, self._graph, self._config)
        self._closed = False
        self._default_session_ctx = None
        self._lock = threading.Lock()
        self._partial_runs = PartialRuns(self)

    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    @property
    def sess_str(self) -> str:
        return self._target or ""

    def list_devices(self) -> list:
        return describe_devices(self._backend.devices)

    # -- feeds -------------------------------------------------------------------------------

    def _convert_feeds(self, feed_dict):
        tensors = []
        values = []
        seen = {}
        graph = self._graph
        for key, value in _flat_feed_items(feed_dict):
            if type(key) is Tensor:
                pairs = ((key, value),)  # the common case: no expansion, no name to resolve
            else:
                expand = fetch_mod.feed_expansion(key)
                pairs = expand(key, value) if expand is not None else [(key, value)]
            for feed, feed_value in pairs:
                if type(feed) is Tensor and feed.graph is graph and graph.is_feedable(feed):
                    tensor = feed
                else:
                    tensor = self._feed_tensor(feed)
                if isinstance(feed_value, SessionValueHandle):
                    feed_value = self._kept_tensor(tensor, feed_value)
                array = self._feed_value(tensor, feed_value)
                if tensor in seen:
                    values[seen[tensor]] = array
                    continue
                seen[tensor] = len(tensors)
                tensors.append(tensor)
                values.append(array)
        return tensors, values

    def _feed_tensor(self, key) -> Tensor:
        try:
            tensor = self._graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
        except (KeyError, ValueError, TypeError) as err:
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: {err}") from None
        if not self._graph.is_feedable(tensor):
            raise ValueError(f"Tensor {tensor} may not be fed.")
        return tensor

    def _kept_tensor(self, tensor: Tensor, handle: SessionValueHandle):
        """The value this session keeps under `handle`, fed to `tensor` (same dtype)."""
        store = getattr(self._backend, "tensor_store", None)
        if store is None:
            raise errors.UnimplementedError(
                None, None, "Feeding a TensorHandle needs a session that keeps tensors "
                f"(an in-process session); target {self._target!r} does not.")
        if handle.dtype is not None and tensor.dtype.base_dtype != handle.dtype:
            raise TypeError(f"Cannot feed a TensorHandle of dtype {handle.dtype.name} to "
                            f"{tensor.name} of dtype {tensor.dtype.base_dtype.name}.")
        return store.get(handle.handle)

    @staticmethod
    def _feed_value(tensor: Tensor, value):
        if isinstance(value, (Tensor, Operation)):
            raise TypeError("The value of a feed cannot be a tf.Tensor object. Acceptable feed "
                            "values include Python scalars, strings, lists, numpy ndarrays, or "
                            "TensorHandles. For reference, the tensor object was "
                            f"{value!r} which was passed to the feed with key {tensor!r}.")
        dtype = tensor.dtype.base_dtype
        np_dtype = dtype.as_numpy_dtype
        if dtype is dtypes.resource and not isinstance(value, np.ndarray):
            return value  # a resource object (e.g. a lookup table) passed by reference
        if dtype is dtypes.string:
            array = _string_array(value)  # object arrays may hold str: fed as UTF-8 bytes
        elif isinstance(value, np.ndarray) and value.dtype == np_dtype:
            array = value
        else:
            if _is_python_int(value) and dtype.is_integer:
                info = np.iinfo(np_dtype)
                if not info.min <= value <= info.max:
                    raise TypeError(f"Type of feed value {value} with type {type(value)} is not "
                                    f"compatible with Tensor type {dtype.name}.")
            try:
                array = np.asarray(value, dtype=np_dtype)
            except (TypeError, ValueError) as err:
                # As TF 1.x (NumPy's conversion error): ValueError for a value that does not
                # parse ("x" fed as float32), TypeError for one of the wrong kind (None).
                cls = ValueError if isinstance(err, ValueError) else TypeError
                raise cls(f"Cannot feed value {value!r} to tensor {tensor.name} of dtype "
                          f"{dtype.name}: {err}") from None
        shape = tensor.get_shape()
        if not _shape_matches(shape, array.shape):
            raise ValueError(f"Cannot feed value of shape {array.shape!r} for Tensor "
                             f"{tensor.name!r}, which has shape {str(shape)!r}")
        return array

    # -- run ---------------------------------------------------------------------------------

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the ops and evaluates the tensors in `fetches`, with `feed_dict` substituted.

        Args:
            fetches: a graph element, a name, or a nested list/tuple/namedtuple/dict of them.
            feed_dict: {Tensor or name: value}; values are converted to the tensor's dtype
                and checked against its static shape.
            options: a `tf.RunOptions` (timeout_in_ms, trace_level, output_partition_graphs).
            run_metadata: a `tf.RunMetadata` to fill with step stats and partition graphs.

        Returns:
            The fetched values in the structure of `fetches` (Operations give None).

        Raises:
            RuntimeError: the session is closed.
            TypeError, ValueError: bad fetches or feeds.
            OpError: the step failed; the error names the op and where it was created.

        Example:
            >>> sess.run({"c": c}, feed_dict={x: [[1.0, 2.0]]})
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        handler = fetch_mod.FetchHandler(self._graph, fetches)
        feed_tensors, feed_values = self._convert_feeds(feed_dict) if feed_dict else ((), [])
        fetch_tensors = []
        targets = []
        positions = []
        for element in handler.elements:
            if isinstance(element, Operation):
                if not self._graph.is_fetchable(element):
                    raise ValueError(f"Operation {element.name!r} has been marked as not "
                                     "fetchable.")
                targets.append(element)
                positions.append(None)
            else:
                if not self._graph.is_fetchable(element):
                    raise ValueError(f"Tensor {element.name!r} has been marked as not "
                                     "fetchable.")
                positions.append(len(fetch_tensors))
                fetch_tensors.append(element)
        values = self._run_flat(tuple(feed_tensors), feed_values, tuple(fetch_tensors),
                                tuple(targets), options, run_metadata)
        if session_handles.has_fetch_wrappers(fetch_tensors):
            values = [session_handles.wrap_fetched(t, v, self)
                      for t, v in zip(fetch_tensors, values)]
        return handler.build([None if p is None else values[p] for p in positions])

    def _run_flat(self, feeds, feed_values, fetches, targets, options, run_metadata):
        traced = bool(options is not None and (options.trace_level or
                                               options.output_partition_graphs))
        backend = self._backend
        plan = backend.get_plan(feeds, fetches, targets, traced)
        foreground = producer_gate.foreground_enter()
        try:
            if getattr(backend, "fills_metadata", False):
                raw = backend.run_step(plan, feed_values, options, run_metadata)
                return _finish_fetches(raw, plan.copy_flags, fetches)
            trace = StepTrace() if traced and options.trace_level else None
            raw = backend.run_step(plan, feed_values, options, trace)
        except errors.OpError as err:
            _name_client_op(err, self._graph)
            raise
        finally:
            if foreground:
                producer_gate.foreground_exit()
        if run_metadata is not None and traced:
            fill_run_metadata(run_metadata, plan, trace, options)
        return _finish_fetches(raw, plan.copy_flags, fetches)

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """Returns `fn(*feed_values)` running `fetches` with `feed_list` fed, planned once."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        handler = fetch_mod.FetchHandler(self._graph, fetches)
        feed_tensors = tuple(self._feed_tensor(f) for f in (feed_list or []))
        fetch_tensors = tuple(e for e in handler.elements if isinstance(e, Tensor))
        targets = tuple(e for e in handler.elements if isinstance(e, Operation))
        positions = []
        count = 0
        for element in handler.elements:
            if isinstance(element, Tensor):
                positions.append(count)
                count += 1
            else:
                positions.append(None)

        def call(*args, **kwargs):
            options = kwargs.pop("options", None) if accept_options else None
            run_metadata = kwargs.pop("run_metadata", None) if accept_options else None
            if kwargs:
                raise TypeError(f"Unexpected keyword arguments {sorted(kwargs)}")
            if len(args) != len(feed_tensors):
                raise TypeError(f"Expected {len(feed_tensors)} feed values, got {len(args)}")
            if self._closed:
                raise RuntimeError("Attempted to use a closed Session.")
            values = [self._feed_value(t, v) for t, v in zip(feed_tensors, args)]
            raw = self._run_flat(feed_tensors, values, fetch_tensors, targets, options,
                                 run_metadata)
            return handler.build([None if p is None else raw[p] for p in positions])

        return call

    def partial_run_setup(self, fetches, feeds=None) -> str:
        """Declares the fetches and feeds of a step to be run in pieces (`partial_run`).

        Returns:
            A handle naming the step.
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        return self._partial_runs.setup(fetches, feeds)

    def partial_run(self, handle, fetches, feed_dict=None):
        """Runs the piece of step `handle` that computes `fetches`, feeding `feed_dict`: each
        op of the step runs once, across the pieces.

        Raises:
            InvalidArgumentError: an unknown handle; a fetch or feed not declared in the setup,
                already fetched or already fed.
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        return self._partial_runs.run(handle, fetches, feed_dict)

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        """Closes the session: cancels running steps and frees its state."""
        if not self._closed:
            self._closed = True
            self._backend.close()

    def as_default(self):
        return graph_mod.default_session_controller(self)

    def __enter__(self):
        if self._default_session_ctx is None:
            self._default_session_ctx = self.as_default()
            self._graph_ctx = self._graph.as_default()
            self._graph_ctx.__enter__()
            self._default_session_ctx.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._default_session_ctx is not None:
            self._default_session_ctx.__exit__(exc_type, exc, tb)
            self._graph_ctx.__exit__(exc_type, exc, tb)
            self._default_session_ctx = None
        self.close()
        return False

    def __del__(self):
        try:
            if not self._closed:
                self.close()
        except Exception:  # noqa: BLE001, S110 - best effort at interpreter exit
            pass

    @staticmethod
    def reset(target, containers=None, config=None) -> None:
        """Clears `containers` (all when None) on the server at `target`."""
        target = target.decode() if isinstance(target, bytes) else (target or "")
        for prefix, (_, reset) in _TARGET_FACTORIES.items():
            if target.startswith(prefix) and reset is not None:
                reset(target, containers, config)
                return
        if target:
            raise errors.InvalidArgumentError(None, None, f"No reset for target {target!r}")


def _shape_matches(shape, dims: tuple) -> bool:
    """`shape.is_compatible_with(dims)` for the int tuple of an array's shape, without
    building a TensorShape per feed."""
    if shape.ndims is None:
        return True
    static = shape.as_list()
    if len(static) != len(dims):
        return False
    for want, have in zip(static, dims):
        if want is not None and want != have:
            return False
    return True


def _flat_feed_items(feed_dict):
    """The (key, value) feed pairs, pairing nested tuple keys (e.g. an RNN state) with the
    same structure of values, as TF1's session does."""
    for key in feed_dict:
        if isinstance(key, tuple):
            return _nested_feed_items(feed_dict)
    return feed_dict.items()


def _nested_feed_items(feed_dict):
    stack = list(reversed(list(feed_dict.items())))
    while stack:
        key, value = stack.pop()
        if not isinstance(key, tuple) or fetch_mod.feed_expansion(key) is not None:
            yield key, value
            continue
        if not isinstance(value, (tuple, list)) or len(value) != len(key):
            got = len(value) if isinstance(value, (tuple, list)) else type(value).__name__
            raise ValueError(f"Could not flatten feed_dict: the key has {len(key)} elements but "
                             f"its value is {got!r}; a nested key needs a value of the same "
                             "structure.")
        stack.extend(reversed(list(zip(key, value))))


_REMOTE_NODE = re.compile(r"\[\[node (\S+) \((\w+)\) defined at <unknown>\]\]")


def _name_client_op(err, graph) -> None:
    """A kernel error from another process (a remote task) names its node but not the op:
    the op is found in the client's graph, and its creation site goes in the message (as
    TF 1.x's "Caused by op ..., defined at")."""
    if err.op is not None:
        return
    match = _REMOTE_NODE.search(err.message)
    if match is None:
        return
    try:
        op = graph.get_operation_by_name(match.group(1))
    except (KeyError, ValueError):
        return
    err._op = op
    err._message = err._message.replace(match.group(0), match.group(0).replace(
        "defined at <unknown>", f"defined at {op.location}"), 1)
    err.args = (err._message,)


def _finish_fetches(raw, copy_flags, fetches):
    out = []
    for i, value in enumerate(raw):
        if value is DEAD:
            raise errors.InvalidArgumentError(
                None, fetches[i].op, f"Retval[{i}] does not have value: the fetched tensor "
                f"'{fetches[i].name}' was not computed (it is on an untaken branch).")
        if hasattr(value, "read") and not isinstance(value, np.ndarray):
            value = value.read()
            copy = True
        else:
            copy = copy_flags[i]
        if type(value) is np.ndarray:
            if copy or not value.flags.writeable or not value.flags.owndata:
                value = value.copy()
            if value.ndim == 0:
                value = value[()]
        out.append(value)
    return out


class Session(BaseSession):
    """A TF1 session: `tf.Session(target='', graph=None, config=None)`."""


class InteractiveSession(BaseSession):
    """A session that installs itself as the default session when created."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        self._interactive_ctx = self.as_default()
        self._interactive_ctx.__enter__()
        self._interactive_graph_ctx = self._graph.as_default()
        self._interactive_graph_ctx.__enter__()

    def close(self) -> None:
        super().close()
        if self._interactive_ctx is not None:
            self._interactive_ctx.__exit__(None, None, None)
            self._interactive_graph_ctx.__exit__(None, None, None)
            self._interactive_ctx = None
