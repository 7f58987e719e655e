"""`tf.Variable` with TF1 reference semantics, variable collections and initializers.

A Variable `v` is three ops: `v` (VariableV2, the mutable ref), `v/Assign` (its initializer,
fed by `v/initial_value` or the ops of an initializer function) and `v/read` (an Identity
snapshot colocated with it). Ops receive the snapshot when they read `v` and the ref when they
need to mutate it (inputs declared `Ref(T)`), through the conversion function registered here.
"""

from __future__ import annotations

import contextlib
import enum
import inspect

from tensorflux.framework import dtypes, tensor_util
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.op_def import get_op_def
from tensorflux.framework.scopes import init_scope
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import (
    convert_to_tensor,
    register_tensor_conversion_function,
)
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.ops import array as array_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import slicing as slicing_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.state import slice_assign
from tensorflux.ops.state import variable_def as variable_def_lib
from tensorflux.ops.state import variable_ops as state_ops

__all__ = ["Variable", "VariableV1", "VariableSynchronization", "VariableAggregation",
           "global_variables", "all_variables", "local_variables", "model_variables",
           "trainable_variables", "moving_average_variables", "variables_initializer",
           "initialize_variables", "global_variables_initializer", "initialize_all_variables",
           "local_variables_initializer", "initialize_local_variables",
           "report_uninitialized_variables", "assert_variables_initialized",
           "variable_creator_scope"]


class VariableSynchronization(enum.Enum):
    """When a distributed variable is aggregated (TF's enum; only AUTO matters locally)."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """How updates to a mirrored variable are combined (TF's enum)."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3


def validate_synchronization_aggregation_trainable(synchronization, aggregation, trainable,
                                                   name):
    """Resolves the defaults of synchronization/aggregation/trainable as TF does."""
    if aggregation is None:
        aggregation = VariableAggregation.NONE
    if not isinstance(aggregation, VariableAggregation):
        raise ValueError(f"Invalid variable aggregation mode: {aggregation} for variable: "
                         f"{name}")
    if synchronization is None:
        synchronization = VariableSynchronization.AUTO
    if not isinstance(synchronization, VariableSynchronization):
        raise ValueError(f"Invalid variable synchronization mode: {synchronization} for "
                         f"variable: {name}")
    if trainable is None:  # ON_READ defaults to non-trainable; an explicit True is kept
        trainable = synchronization != VariableSynchronization.ON_READ
    return synchronization, aggregation, trainable


@contextlib.contextmanager
def variable_creator_scope(variable_creator):
    """Within the block, `tf.Variable(...)` (and so `get_variable`) calls `variable_creator`.

    `variable_creator(next_creator, **kwargs)` receives the constructor's arguments as keywords
    and `next_creator`, the creator of the enclosing scope (ultimately the default one); it
    returns the variable, usually `next_creator(**kwargs)` with arguments changed. Scopes nest
    (the innermost creator is called first) and belong to the default graph and this thread.
    """
    graph = graph_mod.get_default_graph()
    old = graph._variable_creator_stack
    new = old + [variable_creator]
    graph._variable_creator_stack = new
    try:
        yield
    finally:
        if graph._variable_creator_stack is not new:
            raise RuntimeError("Exiting variable_creator_scope without proper nesting.")
        graph._variable_creator_stack = old


class _VariableMeta(type):
    """Routes direct `tf.Variable(...)` calls through the variable creator scopes (as TF1's
    VariableMetaclass); subclasses constructed by name are built directly."""

    def __call__(cls, *args, **kwargs):
        if cls is not Variable:
            return super().__call__(*args, **kwargs)
        creators = graph_mod.get_default_graph()._variable_creator_stack
        if not creators:
            return super().__call__(*args, **kwargs)
        bound = _VARIABLE_SIGNATURE.bind(None, *args, **kwargs)
        bound.apply_defaults()  # creators see every argument, as TF passes them
        arguments = dict(bound.arguments)
        arguments.pop("self")

        def default_creator(**kw):
            return type.__call__(Variable, **kw)

        chain = default_creator
        for creator in list(creators):
            chain = _chained(creator, chain)
        return chain(**arguments)


def _chained(creator, next_creator):
    return lambda **kw: creator(next_creator, **kw)


class Variable(metaclass=_VariableMeta):
    """A TF1 reference variable: state that persists across `Session.run` calls.

    Contract: the value lives in each session's device (two sessions on one graph have their
    own values); reading before `v.initializer` (or a restore) has run raises
    FailedPreconditionError naming the variable; `assign*`/`scatter*` return the ref, so their
    result read later in the same step sees the update.

    Example:
        >>> v = tf.Variable([1.0, 2.0], name="v")
        >>> inc = v.assign_add([1.0, 1.0])
        >>> sess.run(v.initializer)
        >>> sess.run(inc)
        array([2., 3.], dtype=float32)
    """

    __array_priority__ = 100

    class SaveSliceInfo:
        """Where a partition of a larger variable sits (used by the Saver for slices)."""

        def __init__(self, full_name=None, full_shape=None, var_offset=None, var_shape=None,
                     save_slice_info_def=None, import_scope=None):
            self.full_name = full_name
            self.full_shape = list(full_shape) if full_shape is not None else None
            self.var_offset = list(var_offset) if var_offset is not None else None
            self.var_shape = list(var_shape) if var_shape is not None else None

        @property
        def spec(self) -> str:
            """'full_shape offset,length:...' as the SaveV2 `shape_and_slices` entry."""
            full = " ".join(str(d) for d in self.full_shape)
            parts = ":".join(f"{o},{s}" for o, s in zip(self.var_offset, self.var_shape))
            return f"{full} {parts}"

    def __new__(cls, *args, **kwargs):
        # TF1's VariableMetaclass: tf.Variable(use_resource=True), a VariableDef with
        # is_resource, or tf.enable_resource_variables() give a ResourceVariable.
        if cls is Variable and _wants_resource(args, kwargs):
            from tensorflux.ops.state import resource_variables  # cycle: it subclasses us

            return object.__new__(resource_variables._ResourceVariableFromVariable)
        return object.__new__(cls)

    def __init__(self, initial_value=None, trainable=None, collections=None,
                 validate_shape=True, caching_device=None, name=None, variable_def=None,
                 dtype=None, expected_shape=None, import_scope=None, constraint=None,
                 use_resource=None, synchronization=VariableSynchronization.AUTO,
                 aggregation=VariableAggregation.NONE, shape=None):
        """Creates a variable (TF1 `tf.Variable`; `use_resource=True` makes a ResourceVariable).

        Args:
            initial_value: a Tensor or value convertible to one, or a callable returning one
                (then its ops are colocated with the variable); must have a fully defined
                shape unless `validate_shape` is False.
            trainable: add to TRAINABLE_VARIABLES (default True).
            collections: graph collections (default [GLOBAL_VARIABLES]).
            validate_shape: when False the variable's shape is unknown and assignments may
                change it.
            caching_device: device of the `read` snapshot.
            name: the variable's name (default "Variable"), made unique.
            variable_def: an object with `variable_name`, `initializer_name`,
                `snapshot_name` (and optionally `initial_value_name`, `trainable`) naming
                existing ops to wrap instead of creating new ones.
            dtype: the dtype of the initial value (converted if given).
            constraint: a function applied by optimizers after updates.
            shape: the variable's static shape (default: the initial value's).

        Raises:
            ValueError: no initial value, or its shape is not fully defined.
        """
        synchronization, aggregation, trainable = \
            validate_synchronization_aggregation_trainable(synchronization, aggregation,
                                                           trainable, name)
        self._trainable = trainable
        self._synchronization = synchronization
        self._aggregation = aggregation
        self._constraint = constraint
        self._save_slice_info = None
        self._caching_device = caching_device
        if constraint is not None and not callable(constraint):
            raise ValueError("The `constraint` argument must be a callable.")
        if variable_def is not None:
            if initial_value is not None:
                raise ValueError("variable_def and initial_value are mutually exclusive.")
            self._init_from_def(variable_def, import_scope)
            return
        self._init_from_args(initial_value, collections, validate_shape, caching_device, name,
                             dtype, shape)

    def _checked_collections(self, initial_value, collections) -> list:
        """The collections a new variable joins (TRAINABLE_VARIABLES added when trainable)."""
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        if not isinstance(collections, (list, tuple, set)):
            raise ValueError(f"collections argument to Variable constructor must be a list, "
                             f"tuple, or set. Got {collections} of type {type(collections)}")
        collections = list(collections)
        if self._trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        return collections

    def _init_from_args(self, initial_value, collections, validate_shape, caching_device, name,
                        dtype, shape):
        collections = self._checked_collections(initial_value, collections)
        graph = graph_mod.get_default_graph()
        with init_scope(), graph.name_scope(name or "Variable") as scope:
            self._variable = self._initial_value_and_storage(graph, scope, initial_value, dtype,
                                                             shape, validate_shape)
            with graph.colocate_with(self._variable.op):
                self._initializer_op = state_ops.assign(
                    self._variable, self._initial_value, validate_shape=validate_shape).op
            if caching_device is not None:
                with graph.device(caching_device):
                    self._snapshot = _identity(self._variable, "read")
            else:
                with graph.colocate_with(self._variable.op):
                    self._snapshot = _identity(self._variable, "read")
        graph.add_to_collections(collections, self)

    def _initial_value_and_storage(self, graph, scope: str, initial_value, dtype, shape,
                                   validate_shape: bool):
        """Builds `self._initial_value` (under "Initializer" when callable, colocated with the
        variable) and returns the variable's storage op (`_make_storage`) in name scope `scope`."""
        true_name = scope[:-1]
        if callable(initial_value):
            with graph._attr_scope_ctx({"_class": (f"loc:@{true_name}",)}):
                with graph.name_scope("Initializer"), graph.device(None):
                    self._initial_value = convert_to_tensor(
                        initial_value(), name="initial_value", dtype=dtype)
                return self._make_storage(scope, shape, validate_shape)
        self._initial_value = convert_to_tensor(initial_value, name="initial_value", dtype=dtype)
        if self._initial_value.op._control_flow_context is not None:
            raise ValueError(f"Initializer for variable {true_name} is from inside a "
                             "control-flow construct, such as a loop or conditional. "
                             "When creating a variable inside a loop or conditional, "
                             "use a lambda as the initializer.")
        return self._make_storage(scope, shape, validate_shape)

    def _storage_shape(self, shape, validate_shape: bool) -> TensorShape:
        """The variable's shape: `shape` checked against the initial value's, else the initial
        value's own (unknown when not validated)."""
        value_shape = self._initial_value.get_shape()
        if shape is not None:
            shape = as_shape(shape)
            if validate_shape and not shape.is_compatible_with(value_shape):
                raise ValueError(f"The initial value's shape ({value_shape}) is not compatible "
                                 f"with the explicitly supplied `shape` argument ({shape}).")
        elif validate_shape:
            shape = value_shape
        else:
            shape = TensorShape(None)
        if validate_shape and not shape.is_fully_defined():
            raise ValueError(f"initial_value must have a shape specified: "
                             f"{self._initial_value}")
        return shape

    def _make_storage(self, scope: str, shape, validate_shape: bool):
        return state_ops.variable_op_v2(self._storage_shape(shape, validate_shape),
                                        self._initial_value.dtype.base_dtype, name=scope)

    def _init_from_def(self, variable_def, import_scope):
        graph = graph_mod.get_default_graph()

        def element(name):
            if import_scope:
                name = f"{import_scope}/{name}"
            return graph.as_graph_element(name)

        self._variable = element(variable_def.variable_name)
        self._initializer_op = element(variable_def.initializer_name)
        self._snapshot = element(variable_def.snapshot_name)
        initial_name = getattr(variable_def, "initial_value_name", "")
        self._initial_value = element(initial_name) if initial_name else None
        self._trainable = bool(getattr(variable_def, "trainable", self._trainable))
        has_field = getattr(variable_def, "HasField", None)
        if has_field is not None and has_field("save_slice_info_def"):
            info = variable_def.save_slice_info_def
            full_name = f"{import_scope}/{info.full_name}" if import_scope else info.full_name
            self._save_slice_info = Variable.SaveSliceInfo(
                full_name, list(info.full_shape), list(info.var_offset), list(info.var_shape))

    # -- identity and graph placement -------------------------------------------------------

    @property
    def name(self) -> str:
        return self._variable.name

    @property
    def _shared_name(self) -> str:
        """The variable's name without the output suffix (TF's `_shared_name`)."""
        return self.name.split(":", 1)[0]

    @property
    def op(self):
        return self._variable.op

    @property
    def graph(self):
        return self._variable.graph

    @property
    def device(self) -> str:
        return self._variable.device

    @property
    def dtype(self):
        return self._variable.dtype

    @property
    def shape(self) -> TensorShape:
        return self._variable.get_shape()

    def get_shape(self) -> TensorShape:
        return self._variable.get_shape()

    def set_shape(self, shape) -> None:
        self._variable.set_shape(shape)
        self._snapshot.set_shape(shape)

    @property
    def initializer(self):
        return self._initializer_op

    @property
    def initial_value(self):
        return self._initial_value

    @property
    def constraint(self):
        return self._constraint

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def synchronization(self):
        return self._synchronization

    @property
    def aggregation(self):
        return self._aggregation

    def _ref(self) -> Tensor:
        return self._variable

    def _as_graph_element(self) -> Tensor:
        return self._variable

    def _get_save_slice_info(self):
        return self._save_slice_info

    def _set_save_slice_info(self, save_slice_info) -> None:
        self._save_slice_info = save_slice_info

    # -- reading ----------------------------------------------------------------------------

    def value(self) -> Tensor:
        """The `read` snapshot: a tensor holding the variable's value when it runs."""
        return self._snapshot

    def read_value(self) -> Tensor:
        """A new Identity reading the variable (place it under control dependencies)."""
        return _identity(self._variable, "read")

    def eval(self, session=None):
        """The variable's current value in `session` (or the default session)."""
        return self._variable.eval(session=session)

    def initialized_value(self) -> Tensor:
        """The value after initialization: this variable's value if initialized, else its
        initial value (a `tf.cond` on IsVariableInitialized)."""

        with init_scope():
            return control_flow_ops.cond(state_ops.is_variable_initialized(self._variable),
                                         self.read_value, lambda: self._initial_value)

    def load(self, value, session=None) -> None:
        """Loads `value` into the variable by running its initializer with the value fed."""
        session = session or graph_mod.get_default_session()
        if session is None:
            raise ValueError("Either session argument should be provided or default session "
                             "should be established")
        session.run(self._initializer_op, {self._initializer_op.inputs[1]: value})

    # -- updates ----------------------------------------------------------------------------

    def assign(self, value, use_locking=False, name=None, read_value=True):
        """Assigns `value`; returns the updated ref (or the op when `read_value` is False)."""
        ref = state_ops.Assign(self._variable, value, use_locking=use_locking, name=name)
        return ref if read_value else ref.op

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        """Adds `delta` in place; returns the updated ref (or the op)."""
        ref = state_ops.AssignAdd(self._variable, delta, use_locking=use_locking, name=name)
        return ref if read_value else ref.op

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        """Subtracts `delta` in place; returns the updated ref (or the op)."""
        ref = state_ops.AssignSub(self._variable, delta, use_locking=use_locking, name=name)
        return ref if read_value else ref.op

    def _scatter(self, op, sparse_delta, use_locking, name):
        if not hasattr(sparse_delta, "indices") or not hasattr(sparse_delta, "values"):
            raise TypeError(f"sparse_delta is not IndexedSlices: {sparse_delta}")
        return op(self._variable, sparse_delta.indices, sparse_delta.values,
                  use_locking=use_locking, name=name)

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        """Sets rows `sparse_delta.indices` to `sparse_delta.values` (an IndexedSlices)."""
        return self._scatter(state_ops.ScatterUpdate, sparse_delta, use_locking, name)

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        return self._scatter(state_ops.ScatterAdd, sparse_delta, use_locking, name)

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        return self._scatter(state_ops.ScatterSub, sparse_delta, use_locking, name)

    def scatter_mul(self, sparse_delta, use_locking=False, name=None):
        return self._scatter(state_ops.ScatterMul, sparse_delta, use_locking, name)

    def scatter_div(self, sparse_delta, use_locking=False, name=None):
        return self._scatter(state_ops.ScatterDiv, sparse_delta, use_locking, name)

    def scatter_max(self, sparse_delta, use_locking=False, name=None):
        return self._scatter(state_ops.ScatterMax, sparse_delta, use_locking, name)

    def scatter_min(self, sparse_delta, use_locking=False, name=None):
        return self._scatter(state_ops.ScatterMin, sparse_delta, use_locking, name)

    def scatter_nd_update(self, indices, updates, name=None):
        return state_ops.ScatterNdUpdate(self._variable, indices, updates, name=name)

    def scatter_nd_add(self, indices, updates, name=None):
        return state_ops.ScatterNdAdd(self._variable, indices, updates, name=name)

    def scatter_nd_sub(self, indices, updates, name=None):
        return state_ops.ScatterNdSub(self._variable, indices, updates, name=name)

    def count_up_to(self, limit):
        """Increments until `limit`; returns the value before (OutOfRangeError at the limit)."""
        return state_ops.count_up_to(self._variable, limit)

    # -- Python protocol --------------------------------------------------------------------

    def __repr__(self) -> str:
        shape = tuple(self.shape.as_list()) if self.shape.ndims is not None else "<unknown>"
        return f"<tf.Variable '{self.name}' shape={shape} dtype={self.dtype.name}>"

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return self is not other

    def __iter__(self):
        raise TypeError("'Variable' object is not iterable.")

    def __getitem__(self, slice_spec):
        return slice_assign.slice_variable(self, slice_spec)

    def to_proto(self, export_scope=None):
        """This variable as a `VariableDef` with names relative to `export_scope` (None when
        the variable is outside that scope), as TF's `Variable.to_proto`."""
        return variable_def_lib.to_proto(self, export_scope)

    @staticmethod
    def from_proto(variable_def, import_scope=None):
        """The Variable a `VariableDef` describes, its ops looked up in the default graph."""
        return Variable(variable_def=variable_def, import_scope=import_scope)

    def __reduce__(self):
        raise TypeError("Variables cannot be pickled.")


VariableV1 = Variable
_VARIABLE_SIGNATURE = inspect.signature(Variable.__init__)
RefVariable = Variable

_USE_RESOURCE_POSITION = 11  # of `use_resource` in Variable.__init__'s positional arguments


def _wants_resource(args, kwargs) -> bool:
    variable_def = kwargs.get("variable_def", args[6] if len(args) > 6 else None)
    if variable_def is not None:
        return bool(getattr(variable_def, "is_resource", False))
    use_resource = kwargs.get("use_resource", args[_USE_RESOURCE_POSITION]
                              if len(args) > _USE_RESOURCE_POSITION else None)
    if use_resource is None:
        from tensorflux.ops.state import resource_variables  # cycle: it subclasses Variable

        return resource_variables.resource_variables_enabled()
    return bool(use_resource)

_OVERLOADED = (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__div__", "__rdiv__",
    "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__",
    "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__rand__", "__or__", "__ror__",
    "__xor__", "__rxor__", "__pow__", "__rpow__", "__invert__", "__neg__", "__abs__",
    "__matmul__", "__rmatmul__",
)


def _delegate(operator: str):
    def method(self, *args):
        fn = getattr(Tensor, operator, None)
        if fn is None:
            return NotImplemented
        return fn(self._snapshot, *args)

    method.__name__ = operator
    return method


for _operator in _OVERLOADED:
    setattr(Variable, _operator, _delegate(_operator))


def _identity(ref: Tensor, name: str) -> Tensor:
    return array_ops.identity(ref, name=name)


def _variable_to_tensor(value, dtype=None, name=None, as_ref=False):
    if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
        raise ValueError(f"Incompatible type conversion requested to type "
                         f"'{dtypes.as_dtype(dtype).name}' for variable of type "
                         f"'{value.dtype.name}'")
    return value._ref() if as_ref else value.value()


register_tensor_conversion_function(Variable, _variable_to_tensor)
tensor_util.register_tensor_like_type(Variable)


# -- collections -----------------------------------------------------------------------------

def global_variables(scope=None) -> list:
    """Variables in GLOBAL_VARIABLES (shared across devices, saved by default)."""
    return graph_mod.get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def all_variables() -> list:
    """Deprecated alias of `global_variables()`."""
    return global_variables()


def _all_saveable_objects(scope=None) -> list:
    return (graph_mod.get_collection(GraphKeys.GLOBAL_VARIABLES, scope)
            + graph_mod.get_collection(GraphKeys.SAVEABLE_OBJECTS, scope))


def local_variables(scope=None) -> list:
    """Variables in LOCAL_VARIABLES (per-process, e.g. epoch counters; not saved)."""
    return graph_mod.get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def model_variables(scope=None) -> list:
    return graph_mod.get_collection(GraphKeys.MODEL_VARIABLES, scope)


def trainable_variables(scope=None) -> list:
    """Variables in TRAINABLE_VARIABLES (what optimizers update by default)."""
    return graph_mod.get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def moving_average_variables(scope=None) -> list:
    return graph_mod.get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def variables_initializer(var_list, name="init"):
    """An op running the initializers of `var_list` (a NoOp when the list is empty)."""

    if var_list:
        return control_flow_ops.group(*[v.initializer for v in var_list], name=name)
    return control_flow_ops.no_op(name=name)


def initialize_variables(var_list, name="init"):
    """Deprecated alias of `variables_initializer`."""
    return variables_initializer(var_list, name=name)


def global_variables_initializer():
    """An op (named "init") initializing every global variable.

    Example:
        >>> sess.run(tf.global_variables_initializer())
    """
    return variables_initializer(global_variables())


def initialize_all_variables():
    """Deprecated alias of `global_variables_initializer`."""
    return global_variables_initializer()


def local_variables_initializer():
    """An op initializing every local variable."""
    return variables_initializer(local_variables())


def initialize_local_variables():
    """Deprecated alias of `local_variables_initializer`."""
    return local_variables_initializer()


def _variable_refs(var_list):
    if var_list is None:
        var_list = global_variables() + local_variables()
        if not var_list:
            graph = graph_mod.get_default_graph()
            var_list = [op.outputs[0] for op in graph.get_operations()
                        if op.type in ("Variable", "VariableV2")]
    return [convert_to_tensor(v, as_ref=True) for v in var_list]


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor of the op names of the variables not yet initialized.

    Args:
        var_list: variables to check (default: global and local variables, else every
            variable op of the graph).
        name: name scope of the ops.

    Example:
        >>> sess.run(tf.report_uninitialized_variables())
        array([b'w', b'b'], dtype=object)
    """

    refs = _variable_refs(var_list)
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name):
        flags = [state_ops.is_variable_initialized(r) for r in refs]
        if not refs:
            return array_ops.constant([], dtype=dtypes.string)
        mask = comparison_ops.logical_not(concat_ops.stack(flags))
        names = array_ops.constant([r.op.name for r in refs])
        return slicing_ops.boolean_mask(names, mask)


def assert_variables_initialized(var_list=None):
    """An op that fails with FailedPreconditionError unless all `var_list` are initialized.

    Returns the variables' ranks (a scalar for one variable), or None for an empty list.
    """

    refs = _variable_refs(var_list)
    if not refs:
        return None
    graph = graph_mod.get_default_graph()
    ranks = []
    with graph.name_scope("assert_variables_initialized"):
        for ref in refs:
            with graph.colocate_with(ref.op):
                ranks.append(get_op_def("Rank")(ref))
        return ranks[0] if len(ranks) == 1 else concat_ops.stack(ranks)
