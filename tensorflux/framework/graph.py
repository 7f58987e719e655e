"""The `Graph`: ops, unique names, scopes, collections, and the default graph.

A graph only grows; `version` counts the ops added (and input rewrites), so a session's cached
plans know when they are stale. Scopes (name, device, control dependencies, colocation,
container, control-flow context) are recorded on each op as it is created.
"""

from __future__ import annotations

import contextlib
import re
import threading

from tensorflux.framework import device_spec, graph_io
from tensorflux.framework.tensor import Operation, Tensor, user_location
from tensorflux.protos import versions_pb2

_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\-/>]*$")

# Installed by ops.control_flow (the framework imports no op family): called with each new op
# that has inputs, raises ValueError when it reads a value from inside a while loop it is not in.
input_context_check = None


class GraphKeys:
    """Standard collection names."""

    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    CONCATENATED_VARIABLES = "concatenated_variables"
    SAVERS = "savers"
    WEIGHTS = "weights"
    BIASES = "biases"
    ACTIVATIONS = "activations"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    SAVEABLE_OBJECTS = "saveable_objects"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"
    TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    GLOBAL_STEP = "global_step"
    EVAL_STEP = "eval_step"
    TRAIN_OP = "train_op"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    _SUMMARY_COLLECTION = "_SUMMARY_V2"
    VARIABLES = GLOBAL_VARIABLES
    _VARIABLE_COLLECTIONS = [GLOBAL_VARIABLES, LOCAL_VARIABLES, METRIC_VARIABLES, MODEL_VARIABLES,
                             TRAINABLE_VARIABLES, MOVING_AVERAGE_VARIABLES, CONCATENATED_VARIABLES,
                             TRAINABLE_RESOURCE_VARIABLES]
    _STREAMING_MODEL_PORTS = "streaming_model_ports"


def _per_thread_stack(name: str):
    """A graph attribute shared by all threads until `switch_to_thread_local()`; then each
    thread sees its own value, starting empty."""
    shared = "_shared" + name

    def get(self):
        local = self.__dict__.get("_thread_stacks")
        if local is None:
            return self.__dict__[shared]
        if not hasattr(local, name):
            setattr(local, name, [])
        return getattr(local, name)

    def set(self, value):
        local = self.__dict__.get("_thread_stacks")
        if local is None:
            self.__dict__[shared] = value
        else:
            setattr(local, name, value)

    return property(get, set)


class Graph:
    """A dataflow graph: Operations connected by Tensors, plus collections.

    Contract: op names are unique; ops are only added, never removed; `version` grows with each
    change that can affect a plan.
    """

    _device_stack = _per_thread_stack("_device_stack")
    _control_dependencies_stack = _per_thread_stack("_control_dependencies_stack")
    _colocation_stack = _per_thread_stack("_colocation_stack")

    def __init__(self):
        self._lock = threading.RLock()
        self._ops_by_name: dict[str, Operation] = {}
        self._ops: list[Operation] = []
        self._version = 0
        self._mutation_version = 0
        self._names_in_use: dict[str, int] = {}
        self._name_stack = ""
        self._device_stack: list = []
        self._control_dependencies_stack: list = []
        self._colocation_stack: list = []
        self._container = ""
        self._control_flow_context = None
        self._collections: dict[str, list] = {}
        self._finalized = False
        self._seed = None
        self._gradient_override_map: dict[str, str] = {}
        self._unfeedable: set = set()
        self._unfetchable: set = set()
        self._attr_scope: dict = {}
        self._graph_def_versions = (27, 0)
        self._building_function = False
        self._last_id = 0
        self._functions: dict = {}  # the function library: name -> function.DefinedFunction

    def switch_to_thread_local(self) -> None:
        """Makes the device, colocation and control-dependency stacks thread-local (as TF):
        each thread then starts from empty stacks. Idempotent."""
        if self.__dict__.get("_thread_stacks") is None:
            self.__dict__["_thread_stacks"] = threading.local()

    @property
    def _variable_creator_stack(self) -> list:
        """This thread's variable creators for this graph, innermost last (always per thread,
        as TF's); `variable_creator_scope` replaces the list rather than mutating it."""
        stack = getattr(self._creator_local(), "stack", None)
        return stack if stack is not None else []

    @_variable_creator_stack.setter
    def _variable_creator_stack(self, stack: list) -> None:
        self._creator_local().stack = stack

    def _creator_local(self):
        local = self.__dict__.get("_creator_slots")
        if local is None:
            with self._lock:
                local = self.__dict__.setdefault("_creator_slots", threading.local())
        return local

    # -- ops -------------------------------------------------------------------------------

    @property
    def version(self) -> int:
        return self._version

    @property
    def finalized(self) -> bool:
        return self._finalized

    def finalize(self) -> None:
        self._finalized = True

    def _unsafe_unfinalize(self) -> None:
        self._finalized = False

    @property
    def seed(self):
        return self._seed

    @seed.setter
    def seed(self, value):
        self._seed = value

    @property
    def building_function(self) -> bool:
        return False

    @property
    def graph_def_versions(self):
        return versions_pb2.VersionDef(producer=self._graph_def_versions[0],
                                       min_consumer=self._graph_def_versions[1])

    def _add_op(self, op: Operation) -> None:
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        with self._lock:
            if op._name in self._ops_by_name:
                raise ValueError(f"Duplicate node name in graph: '{op._name}'")
            self._last_id += 1
            op._id = self._last_id
            self._ops_by_name[op._name] = op
            self._ops.append(op)
            self._version += 1

    def get_operations(self) -> list:
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not {type(name).__name__}")
        return self.as_graph_element(name, allow_tensor=False, allow_operation=True)

    def get_tensor_by_name(self, name: str) -> Tensor:
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings (or similar), not {type(name).__name__}")
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def _get_operation_by_name_unsafe(self, name: str) -> Operation:
        return self._ops_by_name[name]

    def as_graph_element(self, obj, allow_tensor: bool = True, allow_operation: bool = True):
        """Resolves a Tensor, Operation or name to an element of this graph."""
        if hasattr(obj, "_as_graph_element") and not isinstance(obj, (Tensor, Operation)):
            obj = obj._as_graph_element()
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj} is not an element of this graph.")
            return obj
        if isinstance(obj, str):
            if ":" in obj and allow_tensor:
                op_name, _, index = obj.rpartition(":")
                try:
                    index = int(index)
                except ValueError:
                    raise ValueError(f"The name {obj!r} looks like a tensor name, but is not a "
                                     "valid one: tensor names have the form '<op>:<index>'.")
                op = self._ops_by_name.get(op_name)
                if op is None:
                    raise KeyError(f"The name {obj!r} refers to a Tensor which does not exist. "
                                   f"The operation, {op_name!r}, does not exist in the graph.")
                if index >= len(op._outputs):
                    raise KeyError(f"The name {obj!r} refers to a Tensor which does not exist. "
                                   f"The operation, {op_name!r}, exists but only has "
                                   f"{len(op._outputs)} outputs.")
                return op._outputs[index]
            if ":" not in obj and allow_operation:
                op = self._ops_by_name.get(obj)
                if op is None:
                    raise KeyError(f"The name {obj!r} refers to an Operation not in the graph.")
                return op
            if ":" not in obj and allow_tensor and not allow_operation:
                if obj in self._ops_by_name:
                    raise ValueError(f"The name {obj!r} refers to an Operation, not a Tensor. "
                                     f"Tensor names must be of the form '<op_name>:<output>'.")
                raise KeyError(f"The name {obj!r} refers to an Operation not in the graph.")
            raise ValueError(f"Can not convert {obj!r} to a graph element of the requested kind.")
        kinds = " or ".join(k for k, ok in (("Tensor", allow_tensor),
                                            ("Operation", allow_operation)) if ok)
        raise TypeError(f"Can not convert a {type(obj).__name__} into a {kinds}.")

    # -- names -----------------------------------------------------------------------------

    def get_name_scope(self) -> str:
        return self._name_stack

    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """Returns `name` under the current scope, made unique with a `_N` suffix."""
        if self._name_stack:
            name = f"{self._name_stack}/{name}"
        key = name.lower()
        count = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = count + 1
        if count > 0:
            base = key
            while True:
                candidate = f"{base}_{count}"
                if candidate not in self._names_in_use:
                    break
                count += 1
            if mark_as_used:
                self._names_in_use[candidate] = 1
            name = f"{name}_{count}"
        return name

    @contextlib.contextmanager
    def name_scope(self, name):
        """Pushes a name scope; a name ending in '/' is reused as is, None resets to the root."""
        old = self._name_stack
        if name is None or name == "":
            new = ""
        elif isinstance(name, str) and name.endswith("/"):
            new = name[:-1]
        else:
            if not _VALID_SCOPE_NAME.match(name):
                raise ValueError(f"'{name}' is not a valid scope name")
            new = self.unique_name(name)
        self._name_stack = new
        try:
            yield (new + "/") if new else ""
        finally:
            self._name_stack = old

    # -- scopes ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def device(self, device_name_or_function):
        """Scopes ops onto a device (a string, DeviceSpec, function of the op, or None)."""
        self._device_stack.append(device_name_or_function)
        try:
            yield
        finally:
            self._device_stack.pop()

    def _apply_device(self, op: Operation) -> None:
        # NOTE: innermost scope first, as TF does: a device function sees the device the inner
        # scopes chose (replica_device_setter merges with it) and its result replaces it; an
        # outer string only fills fields still unset; None stops the walk.
        op._device = ""
        for spec in reversed(self._device_stack):
            if spec is None:
                break
            if callable(spec) and not isinstance(spec, (str, device_spec.DeviceSpec)):
                chosen = spec(op)
                op._device = device_spec.canonical_name(chosen) if chosen else ""
            else:
                op._device = device_spec.merge_device(spec, op._device)

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops created in the scope run after `control_inputs` (None clears the scope)."""
        if control_inputs is None:
            # As in TF, None also leaves any cond/while context (variables and other state
            # created here live outside the loop or branch).
            saved = self._control_dependencies_stack
            saved_context = self._control_flow_context
            self._control_dependencies_stack = []
            self._control_flow_context = None
            try:
                yield
            finally:
                self._control_dependencies_stack = saved
                self._control_flow_context = saved_context
            return
        ops = []
        for item in control_inputs:
            if hasattr(item, "_as_graph_element") and not isinstance(item, (Tensor, Operation)):
                item = item._as_graph_element()
            if hasattr(item, "op") and not isinstance(item, (Tensor, Operation)):
                item = item.op  # IndexedSlices and friends
            element = self.as_graph_element(item)
            ops.append(element.op if isinstance(element, Tensor) else element)
        self._control_dependencies_stack.append(ops)
        try:
            yield
        finally:
            self._control_dependencies_stack.pop()

    def _current_control_dependencies(self) -> list:
        result = []
        for ops in self._control_dependencies_stack:
            for op in ops:
                if op not in result:
                    result.append(op)
        return result

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing: bool = False):
        """Places ops created in the scope with `op` (recorded as a `_class` attr)."""
        if op is None:
            saved_stack, saved_devices = self._colocation_stack, self._device_stack
            self._colocation_stack = []
            try:
                yield
            finally:
                self._colocation_stack = saved_stack
            return
        if hasattr(op, "_as_graph_element") and not isinstance(op, (Tensor, Operation)):
            op = op._as_graph_element()
        if isinstance(op, Tensor):
            op = op.op
        saved_stack = self._colocation_stack
        saved_devices = self._device_stack
        if ignore_existing:
            self._colocation_stack = []
        self._colocation_stack = self._colocation_stack + [op]
        self._device_stack = [op.device or None]
        try:
            yield
        finally:
            self._colocation_stack = saved_stack
            self._device_stack = saved_devices

    @contextlib.contextmanager
    def container(self, container_name: str):
        saved = self._container
        self._container = container_name
        try:
            yield container_name
        finally:
            self._container = saved

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map: dict):
        saved = dict(self._gradient_override_map)
        self._gradient_override_map.update(op_type_map)
        try:
            yield
        finally:
            self._gradient_override_map = saved

    @contextlib.contextmanager
    def _attr_scope_ctx(self, attr_map: dict):
        saved = dict(self._attr_scope)
        self._attr_scope.update(attr_map)
        try:
            yield
        finally:
            self._attr_scope = saved

    def _get_control_flow_context(self):
        return self._control_flow_context

    def _set_control_flow_context(self, context) -> None:
        self._control_flow_context = context

    # -- feeding and fetching --------------------------------------------------------------

    def prevent_feeding(self, tensor) -> None:
        self._unfeedable.add(tensor)

    def is_feedable(self, tensor) -> bool:
        return tensor not in self._unfeedable

    def prevent_fetching(self, op) -> None:
        self._unfetchable.add(op)

    def is_fetchable(self, tensor_or_op) -> bool:
        op = tensor_or_op.op if isinstance(tensor_or_op, Tensor) else tensor_or_op
        return op not in self._unfetchable

    # -- collections -----------------------------------------------------------------------

    def add_to_collection(self, name, value) -> None:
        with self._lock:
            self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value) -> None:
        names = (names,) if isinstance(names, str) else set(names)
        for name in names:
            self.add_to_collection(name, value)

    def get_collection_ref(self, key) -> list:
        with self._lock:
            return self._collections.setdefault(key, [])

    def get_collection(self, key, scope=None) -> list:
        items = self._collections.get(key, [])
        if scope is None:
            return list(items)
        pattern = re.compile(scope)
        result = []
        for item in items:
            name = getattr(item, "name", None)
            if name is not None and pattern.match(name):
                result.append(item)
        return result

    def get_all_collection_keys(self) -> list:
        return [k for k, v in self._collections.items() if isinstance(v, list)]

    def clear_collection(self, name) -> None:
        self._collections.pop(name, None)

    # -- serialization ---------------------------------------------------------------------

    def as_graph_def(self, from_version=None, add_shapes: bool = False):
        return graph_io.graph_to_graph_def(self, from_version, add_shapes)

    def as_default(self):
        return _default_graph_stack.get_controller(self)

    def is_default(self) -> bool:
        return get_default_graph() is self

    def __repr__(self) -> str:
        return f"<tensorflux.Graph ops={len(self._ops)}>"


class _DefaultStack(threading.local):
    """A thread-local stack of defaults (graphs or sessions)."""

    def __init__(self):
        self.stack = []

    @contextlib.contextmanager
    def get_controller(self, default):
        self.stack.append(default)
        try:
            yield default
        finally:
            if self.stack and self.stack[-1] is default:
                self.stack.pop()
            elif default in self.stack:
                self.stack.remove(default)


class _GraphStack(_DefaultStack):
    global_default = None


_default_graph_stack = _GraphStack()
_global_default_graph = [None]
_default_session_stack = _DefaultStack()


def get_default_graph() -> Graph:
    """The innermost `as_default` graph of this thread, else the global default graph."""
    if _default_graph_stack.stack:
        return _default_graph_stack.stack[-1]
    if _global_default_graph[0] is None:
        _global_default_graph[0] = Graph()
    return _global_default_graph[0]


def reset_default_graph() -> None:
    """Replaces the global default graph with a new empty one."""
    if _default_graph_stack.stack:
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. "
                             "If you need a cleared graph, exit the nesting and create a new "
                             "graph.")
    _global_default_graph[0] = Graph()


def get_default_session():
    return _default_session_stack.stack[-1] if _default_session_stack.stack else None


def default_session_controller(session):
    return _default_session_stack.get_controller(session)


def run_in_session(element, feed_dict, session):
    session = session or get_default_session()
    if session is None:
        raise ValueError("Cannot evaluate tensor using `eval()` / `run()`: No default session is "
                         "registered. Use `with sess.as_default()` or pass an explicit session.")
    if session.graph is not element.graph:
        raise ValueError("Cannot use the given session to evaluate tensor: the tensor's graph is "
                         "different from the session's graph.")
    return session.run(element, feed_dict)


def add_to_collection(name, value) -> None:
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value) -> None:
    get_default_graph().add_to_collections(names, value)


def get_collection(key, scope=None) -> list:
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key) -> list:
    return get_default_graph().get_collection_ref(key)


def new_operation(graph: Graph, op_def, name: str, inputs: list, output_types: list,
                  attrs: dict, location=None) -> Operation:
    """Creates and adds an Operation, applying the graph's current scopes."""
    control_inputs = graph._current_control_dependencies()
    if control_inputs:
        input_ops = {t.op for t in inputs}
        control_inputs = [c for c in control_inputs if c not in input_ops]
    if graph._colocation_stack:
        groups = []
        for op in graph._colocation_stack:
            for group in op.colocation_groups():
                group = group.decode()
                if group not in groups:
                    groups.append(group)
        attrs["_class"] = tuple(groups)
    op = Operation(graph, op_def, name, inputs, output_types, attrs, control_inputs, "",
                   location or user_location())
    graph._apply_device(op)
    if graph._colocation_stack and graph._colocation_stack[-1].device:
        op._device = graph._colocation_stack[-1].device
    graph._add_op(op)
    if input_context_check is not None and inputs:
        input_context_check(op)
    context = graph._control_flow_context
    if context is not None:
        op._control_flow_context = context
        context.add_op(op)
    return op
