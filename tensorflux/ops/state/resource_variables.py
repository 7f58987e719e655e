"""`ResourceVariable`: a variable whose state is reached through a `VarHandleOp` handle.

A ResourceVariable `v` is the ops `v` (VarHandleOp), `v/IsInitialized/VarIsInitializedOp`,
`v/Assign` (AssignVariableOp, its initializer) and `v/Read/ReadVariableOp` (the graph element
fetched by `sess.run(v)`), as TensorFlow 1.15 names them. Every other read (`value()`, the
tensor conversion, `read_value()`) is a new ReadVariableOp, so it obeys the control
dependencies around it; reads are snapshots (see `resource_variable_ops`).

`tf.Variable(..., use_resource=True)`, `tf.get_variable(..., use_resource=True)`,
`variable_scope(..., use_resource=True)` and `tf.enable_resource_variables()` all create one.
"""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.behavior import (
    disable_resource_variables,
    enable_resource_variables,
    resource_variables_enabled,
)
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.scopes import init_scope
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import (
    convert_to_tensor,
    register_tensor_conversion_function,
)
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.ops import array as array_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.state import resource_variable_ops as rv_ops
from tensorflux.ops.state import variables
from tensorflux.protos import variable_pb2

__all__ = ["ResourceVariable", "enable_resource_variables", "disable_resource_variables",
           "resource_variables_enabled"]



def use_resource_default(use_resource) -> bool:
    """`use_resource`, or the process default when it is None."""
    return resource_variables_enabled() if use_resource is None else bool(use_resource)


class ResourceVariable(variables.Variable):
    """A variable with TF's resource semantics (`tf.compat.v1.ResourceVariable`).

    Contract: reads are snapshots ordered by the graph's data and control dependencies (a read
    under `control_dependencies([v.assign(x)])` sees `x`); reading before initialization raises
    FailedPreconditionError naming the variable; `assign*`/`scatter*` return a read of the
    new value (or the update op with `read_value=False`). The value lives in the resource
    manager of the handle's device under (container, shared_name = the variable's op name), so
    a checkpoint written from a reference variable of the same name restores into it.

    Example:
        >>> v = tf.Variable([1.0, 2.0], use_resource=True, name="v")
        >>> with tf.control_dependencies([v.assign_add([1.0, 1.0])]):
        ...     after = v.read_value()
        >>> sess.run(v.initializer)
        >>> sess.run(after)
        array([2., 3.], dtype=float32)
    """

    _is_resource_variable = True

    def __init__(self, initial_value=None, trainable=None, collections=None,
                 validate_shape=True, caching_device=None, name=None, dtype=None,
                 variable_def=None, import_scope=None, constraint=None,
                 distribute_strategy=None, synchronization=None, aggregation=None, shape=None):
        """Creates a resource variable (arguments as `tf.Variable`'s).

        Raises:
            ValueError: no initial value, or its shape is not fully defined while
                `validate_shape` is true.
        """
        self._cached_value = None
        # The checks and the def/args dispatch are tf.Variable's; `_init_from_args` and
        # `_init_from_def` below are the resource versions.
        super().__init__(initial_value, trainable, collections, validate_shape, caching_device,
                         name, variable_def, dtype, None, import_scope, constraint, True,
                         synchronization, aggregation, shape)

    def _init_from_args(self, initial_value, collections, validate_shape, caching_device, name,
                        dtype, shape):
        collections = self._checked_collections(initial_value, collections)
        graph = graph_mod.get_default_graph()
        with init_scope(), graph.name_scope(name or "Variable") as scope:
            self._handle = self._initial_value_and_storage(graph, scope, initial_value, dtype,
                                                           shape, validate_shape)
            self._dtype = self._initial_value.dtype.base_dtype
            with graph.name_scope("IsInitialized"):
                self._is_initialized_op = rv_ops.var_is_initialized_op(self._handle)
            with graph.name_scope("Assign") as assign_name, \
                    graph.colocate_with(self._handle.op):
                self._initializer_op = rv_ops.AssignVariableOp(
                    self._handle, self._initial_value, name=assign_name)
            with graph.name_scope("Read"), graph.colocate_with(self._handle.op):
                self._graph_element = self._read_variable_op()
            if caching_device is not None:

                with graph.device(caching_device):
                    self._cached_value = array_ops.identity(self._graph_element)
        self._variable = self._handle
        self._snapshot = self._graph_element
        graph.add_to_collections(collections, self)

    def _make_storage(self, scope: str, shape, validate_shape: bool):
        self._shape = self._storage_shape(shape, validate_shape)
        handle_name = scope[:-1]
        return rv_ops.var_handle_op(self._initial_value.dtype.base_dtype, self._shape,
                                    shared_name=handle_name, name=handle_name + "/")

    def _init_from_def(self, variable_def, import_scope):
        graph = graph_mod.get_default_graph()

        def element(name):
            if import_scope:
                name = f"{import_scope}/{name}"
            return graph.as_graph_element(name)

        self._handle = element(variable_def.variable_name)
        self._shape = as_shape(self._handle.op.get_attr("shape"))
        self._dtype = dtypes.as_dtype(self._handle.op.get_attr("dtype")).base_dtype
        self._initializer_op = element(variable_def.initializer_name)
        self._graph_element = element(variable_def.snapshot_name)
        initial_name = getattr(variable_def, "initial_value_name", "")
        self._initial_value = element(initial_name) if initial_name else None
        self._is_initialized_op = None
        self._trainable = bool(getattr(variable_def, "trainable", self._trainable))
        self._variable = self._handle
        self._snapshot = self._graph_element
        has_field = getattr(variable_def, "HasField", None)
        if has_field is not None and has_field("save_slice_info_def"):
            info = variable_def.save_slice_info_def
            full_name = f"{import_scope}/{info.full_name}" if import_scope else info.full_name
            self._save_slice_info = variables.Variable.SaveSliceInfo(
                full_name, list(info.full_shape), list(info.var_offset), list(info.var_shape))

    def to_proto(self, export_scope=None):
        """This variable as a `VariableDef` (with `is_resource=True`), names relative to
        `export_scope`; None when the variable is outside that scope."""

        def strip(name):
            if export_scope and name.startswith(export_scope + "/"):
                return name[len(export_scope) + 1:]
            return name

        if export_scope and not self._handle.name.startswith(export_scope + "/"):
            return None
        proto = variable_pb2.VariableDef(
            variable_name=strip(self._handle.name),
            initializer_name=strip(self._initializer_op.name),
            snapshot_name=strip(self._graph_element.name), is_resource=True,
            trainable=bool(self._trainable))
        if self._initial_value is not None:
            proto.initial_value_name = strip(self._initial_value.name)
        info = self._save_slice_info
        if info is not None:
            proto.save_slice_info_def.full_name = strip(info.full_name)
            proto.save_slice_info_def.full_shape.extend(info.full_shape)
            proto.save_slice_info_def.var_offset.extend(info.var_offset)
            proto.save_slice_info_def.var_shape.extend(info.var_shape)
        return proto

    @staticmethod
    def from_proto(variable_def, import_scope=None):
        """The ResourceVariable described by `variable_def` in the default graph."""
        return ResourceVariable(variable_def=variable_def, import_scope=import_scope)

    # -- identity ---------------------------------------------------------------------------

    @property
    def handle(self):
        """The `resource` tensor of the VarHandleOp."""
        return self._handle

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape) -> None:
        self._shape = self._shape.merge_with(as_shape(shape))
        self._graph_element.set_shape(self._shape)

    def _as_graph_element(self):
        return self._graph_element

    def _ref(self):
        return self._handle

    def is_initialized(self, name=None):
        """A scalar bool tensor: whether the variable holds a value."""
        return rv_ops.var_is_initialized_op(self._handle, name=name)

    # -- reading ----------------------------------------------------------------------------

    def _read_variable_op(self, name=None):
        return rv_ops.read_variable_op(self._handle, self._dtype, name=name)

    def value(self):
        """A new read of the variable (or the cached copy on `caching_device`)."""
        if self._cached_value is not None:
            return self._cached_value
        graph = self._handle.graph
        with graph.colocate_with(self._handle.op):
            return self._read_variable_op()

    def read_value(self):
        """A new read (an Identity of a ReadVariableOp under the "Read" name scope)."""

        graph = self._handle.graph
        with graph.name_scope("Read"), graph.colocate_with(self._handle.op):
            value = self._read_variable_op()
        return array_ops.identity(value)

    def eval(self, session=None):
        """The variable's current value in `session` (or the default session)."""
        return self._graph_element.eval(session=session)

    def initialized_value(self):
        """This variable's value if initialized, else its initial value."""

        with init_scope():
            return control_flow_ops.cond(self.is_initialized(), self.read_value,
                                         lambda: self._initial_value)

    def sparse_read(self, indices, name=None):
        """Rows `indices` of the variable (ResourceGather; gradient is an IndexedSlices)."""
        graph = self._handle.graph
        with graph.name_scope("Gather" if name is None else name), \
                graph.colocate_with(self._handle.op):
            return rv_ops.resource_gather(self._handle, indices, self._dtype)

    def gather_nd(self, indices, name=None):
        """`gather_nd` of the variable (ResourceGatherNd)."""
        graph = self._handle.graph
        with graph.colocate_with(self._handle.op):
            return rv_ops.resource_gather_nd(self._handle, indices, self._dtype, name=name)

    # -- updates ----------------------------------------------------------------------------

    def _read_after(self, op):
        graph = op.graph  # the function graph when the update is in a function body
        with graph.control_dependencies([op]), graph.colocate_with(self._handle.op):
            return self._read_variable_op()

    def _update(self, fn, value, name, read_value):
        graph = self._handle.graph
        with graph.colocate_with(self._handle.op):
            op = fn(self._handle, convert_to_tensor(value, dtype=self._dtype), name=name)
        return self._read_after(op) if read_value else op

    def assign(self, value, use_locking=None, name=None, read_value=True):
        """Assigns `value`; returns a read of the new value (or the op with
        `read_value=False`)."""
        return self._update(rv_ops.assign_variable_op, value, name, read_value)

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        """Adds `delta`; returns a read of the new value (or the op)."""
        return self._update(rv_ops.assign_add_variable_op, delta, name, read_value)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        """Subtracts `delta`; returns a read of the new value (or the op)."""
        return self._update(rv_ops.assign_sub_variable_op, delta, name, read_value)

    def _scatter(self, method, sparse_delta, use_locking=False, name=None):
        if not isinstance(sparse_delta, IndexedSlices):
            raise TypeError(f"sparse_delta is not IndexedSlices: {sparse_delta}")
        graph = self._handle.graph
        with graph.colocate_with(self._handle.op):
            op = rv_ops.SCATTER_OPS[method](
                self._handle, sparse_delta.indices,
                convert_to_tensor(sparse_delta.values, dtype=self._dtype), name=name)
        return self._read_after(op)

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        """Sets rows `sparse_delta.indices` to `sparse_delta.values`; returns the new value."""
        return self._scatter("scatter_update", sparse_delta, use_locking, name)

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("scatter_add", sparse_delta, use_locking, name)

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("scatter_sub", sparse_delta, use_locking, name)

    def scatter_mul(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("scatter_mul", sparse_delta, use_locking, name)

    def scatter_div(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("scatter_div", sparse_delta, use_locking, name)

    def scatter_max(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("scatter_max", sparse_delta, use_locking, name)

    def scatter_min(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("scatter_min", sparse_delta, use_locking, name)

    def _scatter_nd(self, method, indices, updates, name):
        graph = self._handle.graph
        with graph.colocate_with(self._handle.op):
            op = rv_ops.SCATTER_OPS[method](self._handle, indices,
                                            convert_to_tensor(updates, dtype=self._dtype),
                                            name=name)
        return self._read_after(op)

    def scatter_nd_update(self, indices, updates, name=None):
        return self._scatter_nd("scatter_nd_update", indices, updates, name)

    def scatter_nd_add(self, indices, updates, name=None):
        return self._scatter_nd("scatter_nd_add", indices, updates, name)

    def scatter_nd_sub(self, indices, updates, name=None):
        return self._scatter_nd("scatter_nd_sub", indices, updates, name)

    def count_up_to(self, limit):
        raise TypeError("count_up_to is not supported on ResourceVariables; use a reference "
                        "variable (use_resource=False) as the counter")

    def __getitem__(self, slice_spec):
        return self.value()[slice_spec]

    def __repr__(self) -> str:
        shape = tuple(self.shape.as_list()) if self.shape.ndims is not None else "<unknown>"
        return f"<tf.Variable '{self.name}' shape={shape} dtype={self.dtype.name}>"


class _ResourceVariableFromVariable(ResourceVariable):
    """What `tf.Variable(..., use_resource=True)` builds: `tf.Variable`'s argument order."""

    def __init__(self, initial_value=None, trainable=None, collections=None,
                 validate_shape=True, caching_device=None, name=None, variable_def=None,
                 dtype=None, expected_shape=None, import_scope=None, constraint=None,
                 use_resource=None, synchronization=None, aggregation=None, shape=None):
        super().__init__(initial_value=initial_value, trainable=trainable,
                         collections=collections, validate_shape=validate_shape,
                         caching_device=caching_device, name=name, dtype=dtype,
                         variable_def=variable_def, import_scope=import_scope,
                         constraint=constraint, synchronization=synchronization,
                         aggregation=aggregation, shape=shape)


# NOTE: users see `type(v).__name__ == "ResourceVariable"` either way, as in TF.
_ResourceVariableFromVariable.__name__ = "ResourceVariable"
_ResourceVariableFromVariable.__qualname__ = "ResourceVariable"


def _delegate(operator: str):

    def method(self, *args):
        fn = getattr(Tensor, operator, None)
        if fn is None:
            return NotImplemented
        return fn(self.value(), *args)

    method.__name__ = operator
    return method


for _operator in variables._OVERLOADED:
    setattr(ResourceVariable, _operator, _delegate(_operator))


def _resource_variable_to_tensor(value, dtype=None, name=None, as_ref=False):
    if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
        raise ValueError(f"Incompatible type conversion requested to type "
                         f"'{dtypes.as_dtype(dtype).name}' for variable of type "
                         f"'{value.dtype.name}'")
    return value.handle if as_ref else value.value()


# NOTE: ahead of tf.Variable's conversion (a ResourceVariable is a tf.Variable too).
register_tensor_conversion_function(ResourceVariable, _resource_variable_to_tensor, priority=90)
