"""State ops: TF1 reference variables and the ops that read and update them in place.

A `VariableV2` node's kernel looks up (or creates) a `LegacyVar` in its device's resource
manager under `(container or "localhost", shared_name or node name)` and outputs it as the ref.
Ops with `Ref(T)` inputs receive that object and mutate its buffer; ops with plain inputs receive
`LegacyVar.read()`, the buffer itself (an alias, as in TF1), so in-place updates are visible to
later readers of the same step. Each Session has its own devices, hence its own variable values.
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.op_def import define_op, get_op_def
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.numerics.scatter import checked_scatter_at, scatter_at

__all__ = ["assign", "assign_add", "assign_sub", "scatter_update", "scatter_add", "scatter_sub",
           "scatter_mul", "scatter_div", "scatter_max", "scatter_min", "scatter_nd_update",
           "scatter_nd_add", "scatter_nd_sub", "count_up_to", "is_variable_initialized"]


class LegacyVar:
    """A reference variable's storage: a buffer (None until first assigned) and a lock.

    Contract: `read()` returns the live buffer or raises FailedPreconditionError naming the
    variable; in-place updates keep the buffer object, so every alias sees them; only `Assign`
    to an uninitialized variable (or with `validate_shape=False` and a new shape) replaces it.
    """

    __slots__ = ("name", "dtype", "shape", "value", "lock")

    def __init__(self, name: str, dtype, shape):
        self.name = name
        self.dtype = dtypes.as_dtype(dtype).base_dtype
        self.shape = shape  # declared dims (tuple) when fully defined, else None
        self.value = None
        self.lock = threading.Lock()

    def read(self) -> np.ndarray:
        value = self.value
        if value is None:
            raise errors.FailedPreconditionError(
                None, None, f"Attempting to use uninitialized value {self.name}")
        return value

    def is_initialized(self) -> bool:
        return self.value is not None

    def __repr__(self) -> str:
        state = "uninitialized" if self.value is None else f"shape={self.value.shape}"
        return f"<LegacyVar {self.name!r} {self.dtype.name} {state}>"


def _merge_shapes(a: TensorShape, b: TensorShape) -> TensorShape:
    """Merges two static shapes with TF's shape-inference messages."""
    if a.ndims is not None and b.ndims is not None:
        if a.ndims != b.ndims:
            raise ValueError(f"Shapes must be equal rank, but are {a.ndims} and {b.ndims}")
        for i, (x, y) in enumerate(zip(a.as_list(), b.as_list())):
            if x is not None and y is not None and x != y:
                raise ValueError(f"Dimension {i} in both shapes must be equal, but are {x} and "
                                 f"{y}. Shapes are {_static_text(a)} and {_static_text(b)}.")
    return a.merge_with(b)


def _static_text(shape: TensorShape) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) + "]"


def _declared_dims(shape):
    if shape is None or not shape.is_fully_defined():
        return None
    return tuple(shape.as_list())


def _dims_text(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


# -- VariableV2 / Variable -------------------------------------------------------------------

_VARIABLE_SIGNATURE = dict(
    outputs=["ref: Ref(dtype)"],
    attrs=["shape: shape", "dtype: type", "container: string = ''",
           "shared_name: string = ''"],
    stateful=True, differentiable=False)

VariableV2 = define_op("VariableV2", **_VARIABLE_SIGNATURE)
Variable = define_op("Variable", **_VARIABLE_SIGNATURE)  # the pre-V2 op, for old GraphDefs


def _variable_shape(*, shape):
    return shape if shape is not None else TensorShape(None)


def _variable_kernel(shape, dtype, container, shared_name, node_name):
    name = shared_name or node_name
    dims = _declared_dims(shape)
    base = dtypes.as_dtype(dtype).base_dtype

    def make():
        return LegacyVar(name, base, dims)

    def variable(ctx):
        var = ctx.resource_mgr.lookup_or_create(container, name, make)
        if type(var) is not LegacyVar or var.dtype is not base:
            raise errors.InvalidArgumentError(
                None, None, f"Trying to share variable {name} as {base.name}, but the resource "
                f"{container or 'localhost'}/{name} already holds {var!r}")
        return var

    return variable


for _op in (VariableV2, Variable):
    _op.shape_fn(_variable_shape)
    _op.kernel(_variable_kernel, ctx=True, factory=True)


def variable_op_v2(shape, dtype, name="Variable", container="", shared_name=""):
    """Creates a `VariableV2` op and returns its ref tensor (container from `tf.container`)."""
    graph = graph_mod.get_default_graph()
    return VariableV2(shape=TensorShape(shape), dtype=dtypes.as_dtype(dtype).base_dtype,
                      container=container or graph._container, shared_name=shared_name,
                      name=name)


def variable_op(shape, dtype, name="Variable", set_shape=True, container="", shared_name=""):
    """The TF1 predecessor of `variable_op_v2` (deprecated in TF 1.x, kept by its programs).

    `set_shape=False` gives the variable an unknown static shape.
    """
    if not set_shape:
        shape = TensorShape(None)
    return variable_op_v2(shape, dtype, name=name, container=container, shared_name=shared_name)


# -- Assign, AssignAdd, AssignSub ------------------------------------------------------------

Assign = define_op(
    "Assign", inputs=["ref: Ref(T)", "value: T"], outputs=["output_ref: Ref(T)"],
    attrs=["T: type", "validate_shape: bool = True", "use_locking: bool = True"],
    stateful=True, differentiable=False, allows_uninitialized_input=True)


@Assign.shape_fn
def _assign_shape(ref, value, *, validate_shape):
    if not validate_shape:
        return value
    return _merge_shapes(ref, value)


def _shape_mismatch(op: str, ref: LegacyVar, lhs, rhs):
    return errors.InvalidArgumentError(
        None, None, f"{op} requires shapes of both tensors to match. lhs shape= "
        f"{_dims_text(lhs)} rhs shape= {_dims_text(rhs)} (variable '{ref.name}')")


@Assign.kernel
def _assign_kernel(ref, value, *, validate_shape):
    value = np.asarray(value)
    with ref.lock:
        current = ref.value
        if current is not None and current.shape == value.shape:
            if current is not value:
                np.copyto(current, value)
            return ref
        lhs = current.shape if current is not None else ref.shape
        if validate_shape and lhs is not None and lhs != value.shape:
            raise _shape_mismatch("Assign", ref, lhs, value.shape)
        ref.value = np.array(value, dtype=ref.dtype.as_numpy_dtype, copy=True)
    return ref


def _dense_update(name: str, ufunc):
    op = define_op(
        name, inputs=["ref: Ref(T)", "value: T"], outputs=["output_ref: Ref(T)"],
        attrs=["T: numbertype", "use_locking: bool = False"], stateful=True,
        differentiable=False)

    op.shape_fn(_merge_shapes)

    def _kernel(ref, value, *, use_locking):
        buffer = ref.read()
        if np.shape(value) != buffer.shape:
            raise _shape_mismatch(name, ref, buffer.shape, np.shape(value))
        if use_locking:
            with ref.lock:
                ufunc(buffer, value, out=buffer)
        else:
            ufunc(buffer, value, out=buffer)
        return ref

    _kernel.__name__ = f"_{name.lower()}_kernel"
    op.kernel(_kernel)
    return op


AssignAdd = _dense_update("AssignAdd", np.add)
AssignSub = _dense_update("AssignSub", np.subtract)


# -- Scatter ops -----------------------------------------------------------------------------

def _check_indices(indices: np.ndarray, limit: int, what: str) -> None:
    if indices.size == 0 or (indices.min() >= 0 and indices.max() < limit):
        return
    bad = (indices < 0) | (indices >= limit)
    if bad.any():
        _raise_bad_index(indices, int(np.argmax(bad.reshape(-1))), limit, what)


def _raise_bad_index(indices: np.ndarray, flat: int, limit: int, what: str):
    raise errors.InvalidArgumentError(
        None, None, f"indices[{flat}] = {int(indices.reshape(-1)[flat])} is not in "
        f"[0, {limit}) ({what})")


def _trunc_divide_at(buffer, indices, updates):
    """Integer ScatterDiv: repeated truncating division equals one by the product."""
    divisor = np.ones_like(buffer)
    np.multiply.at(divisor, indices, updates)
    touched = np.unique(indices)
    rows = buffer[touched]
    den = divisor[touched]
    if (den == 0).any():
        raise errors.InvalidArgumentError(None, None, "Integer division by zero in ScatterDiv")
    quotient = np.abs(rows) // np.abs(den)
    buffer[touched] = np.where((rows < 0) != (den < 0), -quotient, quotient)


def _scatter_update_at(buffer, indices, updates):
    buffer[indices] = updates


_SCATTER_FNS = {
    "ScatterUpdate": (_scatter_update_at, "type", "True"),
    "ScatterAdd": (functools.partial(scatter_at, np.add), "numbertype", "False"),
    "ScatterSub": (functools.partial(scatter_at, np.subtract), "numbertype", "False"),
    "ScatterMul": (functools.partial(scatter_at, np.multiply), "numbertype", "False"),
    "ScatterDiv": (None, "numbertype", "False"),
    "ScatterMax": (functools.partial(scatter_at, np.maximum),
                   "{float16, bfloat16, float32, float64, int32, int64}", "False"),
    "ScatterMin": (functools.partial(scatter_at, np.minimum),
                   "{float16, bfloat16, float32, float64, int32, int64}", "False"),
}


_CHECKED_UFUNCS = {"ScatterAdd": np.add, "ScatterSub": np.subtract}


def _scatter(name: str):
    fn, types, locking = _SCATTER_FNS[name]
    checked = _CHECKED_UFUNCS.get(name)  # bounds check folded into the scatter call
    op = define_op(
        name, inputs=["ref: Ref(T)", "indices: Tindices", "updates: T"],
        outputs=["output_ref: Ref(T)"],
        attrs=[f"T: {types}", "Tindices: {int32, int64}", f"use_locking: bool = {locking}"],
        stateful=True, differentiable=False)

    @op.shape_fn
    def _shape(ref, indices, updates):
        if updates.ndims == 0 or indices.ndims is None or ref.ndims is None or \
                updates.ndims is None:
            return ref
        expected = indices.concatenate(ref[1:])
        if not updates.is_compatible_with(expected):
            raise ValueError(f"Shapes must be equal rank and compatible: updates shape {updates} "
                             f"must be indices.shape + ref.shape[1:] = {expected} (or a scalar)")
        return ref

    def _kernel(ref, indices, updates, *, use_locking):
        buffer = ref.read()
        indices = np.asarray(indices)
        updates = np.asarray(updates)
        if buffer.ndim == 0:
            raise errors.InvalidArgumentError(None, None, f"{name}: the variable '{ref.name}' "
                                              "must be at least 1-D")
        expected = indices.shape + buffer.shape[1:]
        if updates.ndim != 0 and updates.shape != expected:
            raise errors.InvalidArgumentError(
                None, None, f"{name}: updates.shape {_dims_text(updates.shape)} must be "
                f"indices.shape + params.shape[1:] = {_dims_text(expected)} or a scalar "
                f"(variable '{ref.name}')")
        if checked is not None:
            if use_locking:
                with ref.lock:
                    bad = checked_scatter_at(checked, buffer, indices, updates)
            else:
                bad = checked_scatter_at(checked, buffer, indices, updates)
            if bad >= 0:
                _raise_bad_index(indices, bad, buffer.shape[0], f"variable '{ref.name}'")
            return ref
        _check_indices(indices, buffer.shape[0], f"variable '{ref.name}'")
        if use_locking:
            with ref.lock:
                _apply(buffer, indices, updates)
        else:
            _apply(buffer, indices, updates)
        return ref

    def _apply(buffer, indices, updates):
        if fn is not None:
            fn(buffer, indices, updates)
        elif buffer.dtype.kind in "iu":
            _trunc_divide_at(buffer, indices, np.broadcast_to(updates, indices.shape +
                                                              buffer.shape[1:]))
        else:
            np.divide.at(buffer, indices, updates)

    _kernel.__name__ = f"_{name.lower()}_kernel"
    op.kernel(_kernel)
    return op


ScatterUpdate = _scatter("ScatterUpdate")
ScatterAdd = _scatter("ScatterAdd")
ScatterSub = _scatter("ScatterSub")
ScatterMul = _scatter("ScatterMul")
ScatterDiv = _scatter("ScatterDiv")
ScatterMax = _scatter("ScatterMax")
ScatterMin = _scatter("ScatterMin")


def _scatter_nd(name: str, fn, types: str, locking: str):
    op = define_op(
        name, inputs=["ref: Ref(T)", "indices: Tindices", "updates: T"],
        outputs=["output_ref: Ref(T)"],
        attrs=[f"T: {types}", "Tindices: {int32, int64}", f"use_locking: bool = {locking}"],
        stateful=True, differentiable=False)

    @op.shape_fn
    def _shape(ref, indices, updates):
        if indices.ndims is None or ref.ndims is None or updates.ndims is None:
            return ref
        depth = indices._dim_list[-1] if indices.ndims else None
        if depth is None:
            return ref
        if depth > ref.ndims:
            return ref  # as TF's shape function: the kernel reports it (InvalidArgumentError)
        expected = indices[:-1].concatenate(ref[depth:])
        if not updates.is_compatible_with(expected):
            raise ValueError(f"updates shape {updates} must be indices.shape[:-1] + "
                             f"ref.shape[indices.shape[-1]:] = {expected}")
        return ref

    def _kernel(ref, indices, updates, *, use_locking):
        buffer = ref.read()
        indices = np.asarray(indices)
        depth = indices.shape[-1] if indices.ndim else 0
        if buffer.ndim == 0:
            raise errors.InvalidArgumentError(
                None, None, f"{name}: Output must be at least 1-D, got shape: [] (variable "
                f"'{ref.name}')")
        if indices.ndim == 0 or depth > buffer.ndim:
            raise errors.InvalidArgumentError(
                None, None, f"{name}: indices must be at least 1-D with indices.shape[-1] <= "
                f"rank of the variable '{ref.name}' ({buffer.ndim}); got indices shape "
                f"{_dims_text(indices.shape)}")
        expected = indices.shape[:-1] + buffer.shape[depth:]
        updates = np.asarray(updates)
        if updates.shape != expected:
            raise errors.InvalidArgumentError(
                None, None, f"{name}: updates shape {_dims_text(updates.shape)} must be "
                f"{_dims_text(expected)} (variable '{ref.name}')")
        limits = np.asarray(buffer.shape[:depth])
        bad = ((indices < 0) | (indices >= limits)).any(axis=-1)
        if bad.any():
            flat = indices.reshape(-1, depth)[int(np.argmax(bad.reshape(-1)))]
            position = int(np.argmax(bad.reshape(-1)))
            raise errors.InvalidArgumentError(
                None, None, f"indices[{position}] = [{', '.join(map(str, flat.tolist()))}] does "
                f"not index into shape {_dims_text(buffer.shape)} (variable '{ref.name}')")
        index = tuple(np.moveaxis(indices, -1, 0))
        if use_locking:
            with ref.lock:
                fn(buffer, index, updates)
        else:
            fn(buffer, index, updates)
        return ref

    _kernel.__name__ = f"_{name.lower()}_kernel"
    op.kernel(_kernel)
    return op


ScatterNdUpdate = _scatter_nd("ScatterNdUpdate", _scatter_update_at, "type", "True")
ScatterNdAdd = _scatter_nd("ScatterNdAdd", np.add.at, "numbertype", "False")
ScatterNdSub = _scatter_nd("ScatterNdSub", np.subtract.at, "numbertype", "False")


# -- IsVariableInitialized, CountUpTo, temporary variables -----------------------------------

IsVariableInitialized = define_op(
    "IsVariableInitialized", inputs=["ref: Ref(dtype)"], outputs=["is_initialized: bool"],
    attrs=["dtype: type"], stateful=True, differentiable=False,
    allows_uninitialized_input=True)


@IsVariableInitialized.shape_fn
def _is_variable_initialized_shape(ref):
    return TensorShape([])


@IsVariableInitialized.kernel
def _is_variable_initialized_kernel(ref):
    return np.asarray(ref.value is not None)


CountUpTo = define_op(
    "CountUpTo", inputs=["ref: Ref(T)"], outputs=["output: T"],
    attrs=["limit: int", "T: {int32, int64}"], stateful=True, differentiable=False)


@CountUpTo.shape_fn
def _count_up_to_shape(ref):
    return ref.with_rank(0)


@CountUpTo.kernel
def _count_up_to_kernel(ref, *, limit):
    buffer = ref.read()
    with ref.lock:
        before = buffer.copy()
        if before >= limit:
            raise errors.OutOfRangeError(None, None, f"Reached limit of {limit}")
        buffer += 1
    return before


TemporaryVariable = define_op(
    "TemporaryVariable", outputs=["ref: Ref(dtype)"],
    attrs=["shape: shape", "dtype: type", "var_name: string = ''"], stateful=True,
    differentiable=False)

_TEMPORARY_CONTAINER = "_temporary_variables"


@TemporaryVariable.shape_fn
def _temporary_variable_shape(*, shape):
    return shape


@TemporaryVariable.kernel(ctx=True, factory=True)
def _temporary_variable_kernel(shape, dtype, var_name, node_name):
    name = var_name or node_name
    dims = _declared_dims(shape)
    if dims is None:
        raise errors.InvalidArgumentError(
            None, None, f"TemporaryVariable '{name}' needs a fully defined shape, got {shape}")
    base = dtypes.as_dtype(dtype).base_dtype

    def temporary(ctx):
        var = LegacyVar(name, base, dims)
        var.value = np.zeros(dims, base.as_numpy_dtype)
        ctx.resource_mgr.create(_TEMPORARY_CONTAINER, f"{ctx.step_id}/{name}", var)
        return var

    return temporary


DestroyTemporaryVariable = define_op(
    "DestroyTemporaryVariable", inputs=["ref: Ref(T)"], outputs=["value: T"],
    attrs=["T: type", "var_name: string"], stateful=True, differentiable=False)


@DestroyTemporaryVariable.shape_fn
def _destroy_temporary_variable_shape(ref):
    return ref


@DestroyTemporaryVariable.kernel(ctx=True)
def _destroy_temporary_variable_kernel(ctx, ref, *, var_name):
    ctx.resource_mgr.delete(_TEMPORARY_CONTAINER, f"{ctx.step_id}/{var_name or ref.name}")
    return ref.read()


# -- public wrappers -------------------------------------------------------------------------

def _is_ref(value) -> bool:
    dtype = getattr(value, "dtype", None)
    return dtype is not None and isinstance(dtype, dtypes.DType) and dtype.is_ref_dtype


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """Assigns `value` to the variable `ref`; returns the ref after the assignment.

    Args:
        ref: a mutable tensor (a `tf.Variable` or a `VariableV2` output).
        value: a tensor (or value) of ref's dtype; with `validate_shape` its shape must match.
        validate_shape: when False the variable takes `value`'s shape (default True).
        use_locking: assign under the variable's lock (default True).
        name: optional op name.

    Returns:
        The ref tensor, holding `value` once the op has run.

    Raises:
        TypeError: `ref` is not a mutable tensor.
        ValueError: the static shapes differ and `validate_shape` is true.

    Example:
        >>> v = tf.Variable([1.0, 2.0])
        >>> sess.run(tf.assign(v, [3.0, 4.0]))
        array([3., 4.], dtype=float32)
    """
    if not _is_ref(ref) and hasattr(ref, "assign"):
        return ref.assign(value, name=name)
    kwargs = {}
    if validate_shape is not None:
        kwargs["validate_shape"] = validate_shape
    if use_locking is not None:
        kwargs["use_locking"] = use_locking
    return Assign(ref, value, name=name, **kwargs)


def assign_add(ref, value, use_locking=None, name=None):
    """Adds `value` to the variable `ref` in place; returns the ref."""
    if not _is_ref(ref) and hasattr(ref, "assign_add"):
        return ref.assign_add(value, name=name)
    kwargs = {} if use_locking is None else {"use_locking": use_locking}
    return AssignAdd(ref, value, name=name, **kwargs)


def assign_sub(ref, value, use_locking=None, name=None):
    """Subtracts `value` from the variable `ref` in place; returns the ref."""
    if not _is_ref(ref) and hasattr(ref, "assign_sub"):
        return ref.assign_sub(value, name=name)
    kwargs = {} if use_locking is None else {"use_locking": use_locking}
    return AssignSub(ref, value, name=name, **kwargs)


def _scatter_wrapper(op, method: str, default_locking: bool):
    def wrapper(ref, indices, updates, use_locking=default_locking, name=None):
        if not _is_ref(ref) and hasattr(ref, method):
            if method.startswith("scatter_nd"):
                return getattr(ref, method)(indices, updates, name=name)
            return getattr(ref, method)(IndexedSlices(updates, indices), use_locking, name)
        return op(ref, indices, updates, use_locking=use_locking, name=name)

    wrapper.__name__ = method
    wrapper.__doc__ = (f"Applies `{op.name}` to rows `indices` of the variable `ref` with "
                       "`updates` (duplicate indices accumulate); returns the ref.")
    return wrapper


scatter_update = _scatter_wrapper(ScatterUpdate, "scatter_update", True)
scatter_add = _scatter_wrapper(ScatterAdd, "scatter_add", False)
scatter_sub = _scatter_wrapper(ScatterSub, "scatter_sub", False)
scatter_mul = _scatter_wrapper(ScatterMul, "scatter_mul", False)
scatter_div = _scatter_wrapper(ScatterDiv, "scatter_div", False)
scatter_max = _scatter_wrapper(ScatterMax, "scatter_max", False)
scatter_min = _scatter_wrapper(ScatterMin, "scatter_min", False)
scatter_nd_update = _scatter_wrapper(ScatterNdUpdate, "scatter_nd_update", True)
scatter_nd_add = _scatter_wrapper(ScatterNdAdd, "scatter_nd_add", False)
scatter_nd_sub = _scatter_wrapper(ScatterNdSub, "scatter_nd_sub", False)


def count_up_to(ref, limit, name=None):
    """Increments the int variable `ref` until `limit`; returns its value before the increment.

    Raises OutOfRangeError at run time once the value has reached `limit`.
    """
    return CountUpTo(ref, limit=limit, name=name)


def is_variable_initialized(ref, name=None):
    """A scalar bool tensor: whether the variable `ref` has been initialized."""
    if not _is_ref(ref) and hasattr(ref, "is_initialized"):
        return ref.is_initialized(name=name)  # a ResourceVariable
    if getattr(getattr(ref, "dtype", None), "base_dtype", None) is dtypes.resource:

        return get_op_def("VarIsInitializedOp")(ref, name=name)  # a resource handle
    return IsVariableInitialized(ref, name=name)
