"""Resource variables' ops: `VarHandleOp`, reads, assignments, gathers and scatters.

A `VarHandleOp` node's kernel finds (or creates) a `ResourceVar` in its device's resource
manager under `(container or "localhost", shared_name or node name)` and outputs it as the
handle (a `resource` tensor); every op taking the handle is colocated with it by the placer.

Contract (TF's resource semantics, unlike reference variables):
- `ReadVariableOp` returns a snapshot: later updates never change a value already read. The
  storage is copy-on-write: a read marks the buffer shared, and the next in-place update
  (AssignAdd, scatters, `ResourceApply*`) first replaces it with a private copy.
- Reads and updates are ordered only by data and control dependencies, so a read placed
  under `control_dependencies([assign])` sees the assignment (also inside loops and conds).
- Reading an uninitialized variable is a FailedPreconditionError naming it.
"""

from __future__ import annotations

import threading

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.ops import array as array_ops
from tensorflux.ops.array import gather_scatter
from tensorflux.ops.state import variable_ops

__all__ = ["var_handle_op", "read_variable_op", "assign_variable_op", "assign_add_variable_op",
           "assign_sub_variable_op", "var_is_initialized_op", "destroy_resource_op",
           "variable_shape", "resource_gather", "resource_gather_nd", "is_resource_variable"]


class ResourceVar:
    """A resource variable's storage: a copy-on-write buffer (None until assigned) and a lock.

    Contract: `read()` returns the current buffer and marks it shared (the reader owns a
    snapshot); `writable()` returns a buffer safe to update in place, copying a shared one
    first; `assign(value)` stores a private copy of `value`.
    """

    __slots__ = ("name", "container", "dtype", "shape", "value", "lock", "_shared")

    def __init__(self, name: str, container: str, dtype, shape):
        self.name = name
        self.container = container or "localhost"
        self.dtype = dtypes.as_dtype(dtype).base_dtype
        self.shape = shape  # declared dims (tuple) when fully defined, else None
        self.value = None
        self.lock = threading.Lock()
        self._shared = False

    def _uninitialized(self):
        return errors.FailedPreconditionError(
            None, None, f"Error while reading resource variable {self.name} from Container: "
            f"{self.container}. This could mean that the variable was uninitialized. "
            f"Attempting to use uninitialized value {self.name}")

    def read(self) -> np.ndarray:
        with self.lock:
            value = self.value
            if value is None:
                raise self._uninitialized()
            self._shared = True
            return value

    def writable(self) -> np.ndarray:
        with self.lock:
            value = self.value
            if value is None:
                raise self._uninitialized()
            if self._shared:
                value = self.value = value.copy()
                self._shared = False
            return value

    def assign(self, value) -> None:
        # NOTE: a copy, as reference variables make: the value may be a fed array the caller
        # still owns, or another op's output.
        value = np.array(value, dtype=self.dtype.as_numpy_dtype, copy=True)
        with self.lock:
            self.value = value
            self._shared = False

    def is_initialized(self) -> bool:
        return self.value is not None

    def __repr__(self) -> str:
        state = "uninitialized" if self.value is None else f"shape={self.value.shape}"
        return f"<ResourceVar {self.name!r} {self.dtype.name} {state}>"


class _InPlace:
    """What the reference-variable kernels expect of a ref (`read`, `name`, `lock`), backed
    by a resource variable's private (copy-on-write) buffer: one update formula for both."""

    __slots__ = ("_var",)

    def __init__(self, var: ResourceVar):
        self._var = var

    def read(self) -> np.ndarray:
        return self._var.writable()

    @property
    def name(self) -> str:
        return self._var.name

    @property
    def lock(self):
        return self._var.lock


def in_place(handle) -> _InPlace:
    """The in-place view a reference-variable kernel can update (for the Resource* twins)."""
    return _InPlace(_check_handle(handle))


def _check_handle(handle, dtype=None) -> ResourceVar:
    if not isinstance(handle, ResourceVar):
        raise errors.InvalidArgumentError(
            None, None, f"Expected a resource variable handle, got {type(handle).__name__}")
    if dtype is not None and dtypes.as_dtype(dtype).base_dtype is not handle.dtype:
        raise errors.InvalidArgumentError(
            None, None, f"Trying to access variable {handle.name} as "
            f"{dtypes.as_dtype(dtype).name}, but it holds {handle.dtype.name}")
    return handle


def _dims_text(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


# -- VarHandleOp ----------------------------------------------------------------------------

VarHandleOp = define_op(
    "VarHandleOp", outputs=["resource: resource"],
    attrs=["container: string = ''", "shared_name: string = ''", "dtype: type",
           "shape: shape"], stateful=True, differentiable=False)


@VarHandleOp.shape_fn
def _var_handle_shape():
    return TensorShape([])


@VarHandleOp.kernel(ctx=True, factory=True)
def _var_handle_kernel(container, shared_name, dtype, shape, node_name):
    name = shared_name or node_name
    base = dtypes.as_dtype(dtype).base_dtype
    dims = tuple(shape.as_list()) if shape is not None and shape.is_fully_defined() else None

    def make():
        return ResourceVar(name, container, base, dims)

    def var_handle(ctx):
        var = ctx.resource_mgr.lookup_or_create(container, name, make)
        if type(var) is not ResourceVar or var.dtype is not base:
            raise errors.InvalidArgumentError(
                None, None, f"Trying to share resource variable {name} as {base.name}, but "
                f"the resource {container or 'localhost'}/{name} already holds {var!r}")
        return var

    return var_handle


# -- reads ----------------------------------------------------------------------------------

ReadVariableOp = define_op("ReadVariableOp", inputs=["resource: resource"],
                           outputs=["value: dtype"], attrs=["dtype: type"], stateful=True)


@ReadVariableOp.shape_fn
def _read_variable_shape(resource):
    return TensorShape(None)


@ReadVariableOp.kernel
def _read_variable_kernel(resource, *, dtype):
    return _check_handle(resource, dtype).read()


@ReadVariableOp.gradient
def _read_variable_grad(op, grad):
    return [grad]


VarIsInitializedOp = define_op("VarIsInitializedOp", inputs=["resource: resource"],
                               outputs=["is_initialized: bool"], stateful=True,
                               differentiable=False)


@VarIsInitializedOp.shape_fn
def _var_is_initialized_shape(resource):
    return TensorShape([])


@VarIsInitializedOp.kernel
def _var_is_initialized_kernel(resource):
    return np.asarray(_check_handle(resource).is_initialized())


VariableShape = define_op("VariableShape", inputs=["input: resource"],
                          outputs=["output: out_type"],
                          attrs=["out_type: {int32, int64} = int32"], stateful=True,
                          differentiable=False)


@VariableShape.shape_fn
def _variable_shape_shape(input):  # noqa: A002 - TF's input name
    return TensorShape([None])


@VariableShape.kernel
def _variable_shape_kernel(input, *, out_type):  # noqa: A002 - TF's input name
    value = _check_handle(input).read()
    return np.asarray(value.shape, dtype=dtypes.as_dtype(out_type).as_numpy_dtype)


ResourceGather = define_op(
    "ResourceGather", inputs=["resource: resource", "indices: Tindices"],
    outputs=["output: dtype"],
    attrs=["batch_dims: int = 0", "validate_indices: bool = True", "dtype: type",
           "Tindices: {int32, int64}"], stateful=True)


@ResourceGather.shape_fn
def _resource_gather_shape(resource, indices):
    return TensorShape(None)


@ResourceGather.kernel
def _resource_gather_kernel(resource, indices, *, batch_dims, dtype):
    value = _check_handle(resource, dtype).read()
    if value.ndim == 0:
        raise errors.InvalidArgumentError(
            None, None, f"ResourceGather: the variable '{resource.name}' must be at least 1-D")
    return gather_scatter._gather(value, np.asarray(indices), 0, batch_dims)


@ResourceGather.gradient
def _resource_gather_grad(op, grad):

    handle, indices = op.inputs
    if op.get_attr("batch_dims"):
        raise LookupError("ResourceGather with batch_dims != 0 has no gradient")
    params_shape = VariableShape(handle)
    size = array_ops.expand_dims(array_ops.size(indices), 0)
    values = array_ops.reshape(grad, array_ops.concat([size, params_shape[1:]], 0))
    return [IndexedSlices(values, array_ops.reshape(indices, size), params_shape), None]


ResourceGatherNd = define_op(
    "ResourceGatherNd", inputs=["resource: resource", "indices: Tindices"],
    outputs=["output: dtype"], attrs=["dtype: type", "Tindices: {int32, int64}"],
    stateful=True)


@ResourceGatherNd.shape_fn
def _resource_gather_nd_shape(resource, indices):
    return TensorShape(None)


@ResourceGatherNd.kernel
def _resource_gather_nd_kernel(resource, indices, *, dtype):
    return gather_scatter._gather_nd_kernel(_check_handle(resource, dtype).read(),
                                            np.asarray(indices))


@ResourceGatherNd.gradient
def _resource_gather_nd_grad(op, grad):

    handle, indices = op.inputs
    shape = VariableShape(handle, out_type=indices.dtype.base_dtype)
    return [array_ops.scatter_nd(indices, grad, shape), None]


# -- assignments ----------------------------------------------------------------------------

AssignVariableOp = define_op("AssignVariableOp", inputs=["resource: resource", "value: dtype"],
                             attrs=["dtype: type"], stateful=True, differentiable=False)


@AssignVariableOp.shape_fn
def _assign_variable_shape(resource, value):
    return []


@AssignVariableOp.kernel
def _assign_variable_kernel(resource, value, *, dtype):
    var = _check_handle(resource, dtype)
    value = np.asarray(value)
    if var.shape is not None and value.shape != var.shape:
        raise errors.InvalidArgumentError(
            None, None, f"Trying to assign to variable {var.name} a value of shape "
            f"{_dims_text(value.shape)}, but the variable's shape is {_dims_text(var.shape)}")
    var.assign(value)


def _dense_update(name: str, ufunc):
    op = define_op(name, inputs=["resource: resource", "value: dtype"],
                   attrs=["dtype: numbertype"], stateful=True, differentiable=False)
    op.shape_fn(_assign_variable_shape)

    def _kernel(resource, value, *, dtype):
        var = _check_handle(resource, dtype)
        value = np.asarray(value)
        with_lock = var.writable()
        if value.shape != with_lock.shape:
            raise errors.InvalidArgumentError(
                None, None, f"Cannot update variable {var.name} with shape "
                f"{_dims_text(with_lock.shape)} using a Tensor with shape "
                f"{_dims_text(value.shape)}, shapes must be equal.")
        ufunc(with_lock, value, out=with_lock)

    _kernel.__name__ = f"_{name.lower()}_kernel"
    op.kernel(_kernel)
    return op


AssignAddVariableOp = _dense_update("AssignAddVariableOp", np.add)
AssignSubVariableOp = _dense_update("AssignSubVariableOp", np.subtract)


DestroyResourceOp = define_op("DestroyResourceOp", inputs=["resource: resource"],
                              attrs=["ignore_lookup_error: bool = True"], stateful=True,
                              differentiable=False)


@DestroyResourceOp.shape_fn
def _destroy_resource_shape(resource):
    return []


@DestroyResourceOp.kernel(ctx=True)
def _destroy_resource_kernel(ctx, resource, *, ignore_lookup_error):
    var = _check_handle(resource)
    # NOTE: TF creates the variable at its first assignment; here VarHandleOp creates it empty,
    # so an uninitialized variable counts as one that does not exist.
    if ctx.resource_mgr.get(var.container, var.name) is not var or var.value is None:
        if ignore_lookup_error:
            return
        raise errors.NotFoundError(None, None, f"Resource {var.container}/{var.name} does not "
                                   "exist.")
    ctx.resource_mgr.delete(var.container, var.name)
    with var.lock:
        var.value = None


# -- scatters: the reference-variable kernels over the copy-on-write buffer ------------------

def _resource_scatter(name: str, ref_op, types: str):
    op = define_op(name, inputs=["resource: resource", "indices: Tindices", "updates: dtype"],
                   attrs=[f"dtype: {types}", "Tindices: {int32, int64}"], stateful=True,
                   differentiable=False)

    @op.shape_fn
    def _shape(resource, indices, updates):
        return []

    ref_kernel = ref_op.kernels["CPU"].fn

    def _kernel(resource, indices, updates, *, dtype):
        ref_kernel(in_place(_check_handle(resource, dtype)), indices, updates, use_locking=False)

    _kernel.__name__ = f"_{name.lower()}_kernel"
    op.kernel(_kernel)
    return op


ResourceScatterUpdate = _resource_scatter("ResourceScatterUpdate", variable_ops.ScatterUpdate,
                                          "type")
ResourceScatterAdd = _resource_scatter("ResourceScatterAdd", variable_ops.ScatterAdd,
                                       "numbertype")
ResourceScatterSub = _resource_scatter("ResourceScatterSub", variable_ops.ScatterSub,
                                       "numbertype")
ResourceScatterMul = _resource_scatter("ResourceScatterMul", variable_ops.ScatterMul,
                                       "numbertype")
ResourceScatterDiv = _resource_scatter("ResourceScatterDiv", variable_ops.ScatterDiv,
                                       "numbertype")
ResourceScatterMin = _resource_scatter("ResourceScatterMin", variable_ops.ScatterMin,
                                       "{float16, bfloat16, float32, float64, int32, int64}")
ResourceScatterMax = _resource_scatter("ResourceScatterMax", variable_ops.ScatterMax,
                                       "{float16, bfloat16, float32, float64, int32, int64}")


def _resource_scatter_nd(name: str, ref_op, types: str):
    op = define_op(name, inputs=["ref: resource", "indices: Tindices", "updates: T"],
                   attrs=[f"T: {types}", "Tindices: {int32, int64}", "use_locking: bool = True"],
                   stateful=True, differentiable=False)

    @op.shape_fn
    def _shape(ref, indices, updates):
        return []

    ref_kernel = ref_op.kernels["CPU"].fn

    def _kernel(ref, indices, updates, *, T, use_locking):  # noqa: N803 - TF's attr name
        ref_kernel(in_place(_check_handle(ref, T)), indices, updates, use_locking=use_locking)

    _kernel.__name__ = f"_{name.lower()}_kernel"
    op.kernel(_kernel)
    return op


ResourceScatterNdUpdate = _resource_scatter_nd("ResourceScatterNdUpdate",
                                               variable_ops.ScatterNdUpdate, "type")
ResourceScatterNdAdd = _resource_scatter_nd("ResourceScatterNdAdd", variable_ops.ScatterNdAdd,
                                            "numbertype")
ResourceScatterNdSub = _resource_scatter_nd("ResourceScatterNdSub", variable_ops.ScatterNdSub,
                                            "numbertype")

SCATTER_OPS = {
    "scatter_update": ResourceScatterUpdate, "scatter_add": ResourceScatterAdd,
    "scatter_sub": ResourceScatterSub, "scatter_mul": ResourceScatterMul,
    "scatter_div": ResourceScatterDiv, "scatter_min": ResourceScatterMin,
    "scatter_max": ResourceScatterMax, "scatter_nd_update": ResourceScatterNdUpdate,
    "scatter_nd_add": ResourceScatterNdAdd, "scatter_nd_sub": ResourceScatterNdSub,
}


# -- static facts about a handle ------------------------------------------------------------

_FORWARDING = frozenset({"Identity", "Enter", "Switch", "Merge", "Exit", "NextIteration",
                         "_Recv"})


def handle_shape(handle) -> TensorShape:
    """The static shape of the variable behind `handle` (its VarHandleOp's `shape` attr)."""
    op = handle.op
    for _ in range(100):
        if op.type == "VarHandleOp":
            return as_shape(op.get_attr("shape"))
        if op.type not in _FORWARDING or not op.inputs:
            break
        op = op.inputs[0].op
    return TensorShape(None)


# -- wrappers -------------------------------------------------------------------------------

def var_handle_op(dtype, shape, container="", shared_name="", name=None):
    """A `VarHandleOp`: the handle of a resource variable (container from `tf.container`)."""
    graph = graph_mod.get_default_graph()
    return VarHandleOp(dtype=dtypes.as_dtype(dtype).base_dtype, shape=as_shape(shape),
                       container=container or graph._container, shared_name=shared_name,
                       name=name)


def read_variable_op(resource, dtype, name=None):
    """Reads the variable behind the handle `resource` (a snapshot of its value)."""
    value = ReadVariableOp(resource, dtype=dtypes.as_dtype(dtype).base_dtype, name=name)
    value.set_shape(handle_shape(resource))
    return value


def _check_static_shape(resource, value, what: str):

    shape = handle_shape(resource)
    value = convert_to_tensor(value)
    if not shape.is_compatible_with(value.get_shape()):
        raise ValueError(f"{what}: the value's shape {value.get_shape()} is not compatible "
                         f"with the variable's shape {shape} ('{resource.op.name}')")
    return value


def assign_variable_op(resource, value, name=None):
    """Assigns `value` to the variable behind `resource`; returns the operation."""
    value = _check_static_shape(resource, value, "AssignVariableOp")
    return AssignVariableOp(resource, value, name=name)


def assign_add_variable_op(resource, value, name=None):
    """Adds `value` to the variable behind `resource`; returns the operation."""
    value = _check_static_shape(resource, value, "AssignAddVariableOp")
    return AssignAddVariableOp(resource, value, name=name)


def assign_sub_variable_op(resource, value, name=None):
    """Subtracts `value` from the variable behind `resource`; returns the operation."""
    value = _check_static_shape(resource, value, "AssignSubVariableOp")
    return AssignSubVariableOp(resource, value, name=name)


def var_is_initialized_op(resource, name=None):
    """A scalar bool tensor: whether the variable behind `resource` holds a value."""
    return VarIsInitializedOp(resource, name=name)


def destroy_resource_op(resource, ignore_lookup_error=True, name=None):
    """Deletes the variable behind `resource` from its device's resource manager."""
    return DestroyResourceOp(resource, ignore_lookup_error=ignore_lookup_error, name=name)


def variable_shape(resource, out_type=dtypes.int32, name=None):
    """The run-time shape of the variable behind `resource` (a 1-D tensor)."""
    return VariableShape(resource, out_type=out_type, name=name)


def resource_gather(resource, indices, dtype, batch_dims=0, validate_indices=True, name=None):
    """Rows `indices` of the variable behind `resource` (its gradient is an IndexedSlices)."""

    indices = convert_to_tensor(indices)
    result = ResourceGather(resource, indices, dtype=dtypes.as_dtype(dtype).base_dtype,
                            batch_dims=batch_dims, validate_indices=validate_indices, name=name)
    shape = handle_shape(resource)
    if shape.ndims and indices.get_shape().ndims is not None and not batch_dims:
        result.set_shape(indices.get_shape().concatenate(shape[1:]))
    return result


def resource_gather_nd(resource, indices, dtype, name=None):
    """`gather_nd` on the variable behind `resource`."""
    return ResourceGatherNd(resource, indices, dtype=dtypes.as_dtype(dtype).base_dtype,
                            name=name)


def is_resource_variable(var) -> bool:
    """True for a ResourceVariable (anything exposing a resource `handle`)."""
    return bool(getattr(var, "_is_resource_variable", False))
