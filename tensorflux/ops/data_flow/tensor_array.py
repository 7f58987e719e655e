"""TensorArray ops (the TensorArrayV3 family): definitions, shapes and kernels.

A TensorArray is a step-scoped resource (step_resources.py): `TensorArrayV3` creates an array
of `size` element slots and returns its handle and a `flow` scalar. Every op that changes the
array takes a `flow_in` and returns a `flow_out`, and every reader takes a flow, so data
dependencies on the flow order the accesses, across loop iterations too.

Element rules follow TensorFlow: an element is written once (gradient arrays sum repeated
writes instead); reading an element that was never written gives zeros when the element shape
is known; with `clear_after_read` an element can be read once; `dynamic_size` arrays grow on
writes past their end.

Gradients follow TensorFlow: the gradient of a read is a write into the gradient TensorArray
(`TensorArrayGradV3`, one per `tf.gradients` call), the gradient of a write is a read from it,
and gather/scatter, concat/split pair the same way; they build graph with the `tf.TensorArray`
class (tensor_array_class.py).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.data_flow import step_resources, tensor_array_class

KIND = "TensorArray"

TensorArrayV3 = define_op(
    "TensorArrayV3", inputs=["size: int32"], outputs=["handle: resource", "flow: float32"],
    attrs=["dtype: type", "element_shape: shape = None", "dynamic_size: bool = False",
           "clear_after_read: bool = True", "identical_element_shapes: bool = False",
           "tensor_array_name: string = ''"], stateful=True, differentiable=False, step_scoped=True)
TensorArrayGradV3 = define_op(
    "TensorArrayGradV3", inputs=["handle: resource", "flow_in: float32"],
    outputs=["grad_handle: resource", "flow_out: float32"], attrs=["source: string"],
    stateful=True, differentiable=False, step_scoped=True)
TensorArrayWriteV3 = define_op(
    "TensorArrayWriteV3",
    inputs=["handle: resource", "index: int32", "value: T", "flow_in: float32"],
    outputs=["flow_out: float32"], attrs=["T: type"], stateful=True, step_scoped=True)
TensorArrayReadV3 = define_op(
    "TensorArrayReadV3", inputs=["handle: resource", "index: int32", "flow_in: float32"],
    outputs=["value: dtype"], attrs=["dtype: type"], stateful=True, step_scoped=True)
TensorArrayGatherV3 = define_op(
    "TensorArrayGatherV3", inputs=["handle: resource", "indices: int32", "flow_in: float32"],
    outputs=["value: dtype"], attrs=["dtype: type", "element_shape: shape = None"],
    stateful=True, step_scoped=True)
TensorArrayScatterV3 = define_op(
    "TensorArrayScatterV3",
    inputs=["handle: resource", "indices: int32", "value: T", "flow_in: float32"],
    outputs=["flow_out: float32"], attrs=["T: type"], stateful=True, step_scoped=True)
TensorArrayConcatV3 = define_op(
    "TensorArrayConcatV3", inputs=["handle: resource", "flow_in: float32"],
    outputs=["value: dtype", "lengths: int64"],
    attrs=["dtype: type", "element_shape_except0: shape = None"], stateful=True, step_scoped=True)
TensorArraySplitV3 = define_op(
    "TensorArraySplitV3",
    inputs=["handle: resource", "value: T", "lengths: int64", "flow_in: float32"],
    outputs=["flow_out: float32"], attrs=["T: type"], stateful=True, step_scoped=True)
TensorArraySizeV3 = define_op(
    "TensorArraySizeV3", inputs=["handle: resource", "flow_in: float32"],
    outputs=["size: int32"], stateful=True, differentiable=False, step_scoped=True)
TensorArrayCloseV3 = define_op("TensorArrayCloseV3", inputs=["handle: resource"],
                               stateful=True, differentiable=False, step_scoped=True)


class TensorArrayStore:
    """The slots of one TensorArray in one step."""

    def __init__(self, name, dtype, size, dynamic_size, clear_after_read, element_shape,
                 identical_shapes, aggregate=False):
        self.name = name
        self.dtype = dtype
        self.np_dtype = dtype.as_numpy_dtype
        self.values: list = [None] * size
        self.cleared = [False] * size
        self.dynamic_size = dynamic_size
        self.clear_after_read = clear_after_read
        self.element_shape = element_shape if element_shape is not None else TensorShape(None)
        self.identical_shapes = identical_shapes
        self.aggregate = aggregate
        self.grads: dict = {}

    def _fail(self, message: str):
        return errors.InvalidArgumentError(None, None, f"TensorArray {self.name}: {message}")

    def _check_index(self, index: int, what: str) -> None:
        if index < 0:
            raise self._fail(f"Tried to {what} index {index}, which is negative.")
        if index >= len(self.values):
            if what == "write to" and self.dynamic_size:
                grow = index + 1 - len(self.values)
                self.values.extend([None] * grow)
                self.cleared.extend([False] * grow)
                return
            raise self._fail(f"Tried to {what} index {index} but array is not resizeable and "
                             f"size is: {len(self.values)}")

    def write(self, index: int, value) -> None:
        index = int(index)
        self._check_index(index, "write to")
        value = np.asarray(value)
        if self.np_dtype == np.object_ and value.dtype.kind in "SU":
            value = value.astype(object)  # fixed-width NumPy strings are TF strings too
        if value.dtype != self.np_dtype:
            raise self._fail(f"Could not write to TensorArray index {index} because the value "
                             f"dtype is {value.dtype} but the TensorArray dtype is "
                             f"{self.dtype.name}.")
        if not self.element_shape.is_compatible_with(TensorShape(value.shape)):
            raise self._fail(f"Could not write to TensorArray index {index} because the value "
                             f"shape is {list(value.shape)} which is incompatible with the "
                             f"TensorArray's element shape: {self.element_shape}.")
        if self.identical_shapes:
            self.element_shape = self.element_shape.merge_with(TensorShape(value.shape))
        if self.cleared[index]:
            raise self._fail(f"Could not write to TensorArray index {index} because it has "
                             "already been read and cleared.")
        old = self.values[index]
        if old is not None:
            if not self.aggregate:
                raise self._fail(f"Could not write to TensorArray index {index} because it "
                                 "has already been written to.")
            if old.shape != value.shape:
                raise self._fail(f"Could not aggregate to TensorArray index {index} because "
                                 f"the existing shape is {_dims(old.shape)} but the new input "
                                 f"shape is {_dims(value.shape)}.")
            value = old + value
        self.values[index] = value

    def _shape_for_zeros(self, index: int):
        shape = self.element_shape
        if not shape.is_fully_defined():
            for value in self.values:
                if value is not None:
                    return value.shape
            raise self._fail(
                f"Could not read from TensorArray index {index}: it has not yet been written to, "
                f"and the element shape is not fully defined: {shape}. Set element_shape on the "
                "TensorArray to read unwritten elements as zeros.")
        return tuple(shape.as_list())

    def read(self, index: int):
        index = int(index)
        self._check_index(index, "read from")
        if self.cleared[index]:
            raise self._fail(f"Could not read index {index} twice because it was cleared after "
                             "a previous read (perhaps try setting clear_after_read = false?).")
        value = self.values[index]
        if value is None:
            return np.zeros(self._shape_for_zeros(index), self.np_dtype)
        if self.clear_after_read:
            self.values[index] = None
            self.cleared[index] = True
        return value

    def gather(self, indices, element_shape):
        indices = np.asarray(indices).reshape(-1)
        if indices.size == 0:
            shape = self.element_shape
            if element_shape is not None:
                shape = shape.merge_with(element_shape) if shape.is_compatible_with(
                    element_shape) else element_shape
            if not shape.is_fully_defined():
                raise errors.UnimplementedError(
                    None, None, f"TensorArray {self.name}: gathering no elements needs a fully "
                    f"defined element shape, got {shape}.")
            return np.zeros([0] + shape.as_list(), self.np_dtype)
        values = [self.read(i) for i in indices]
        first = values[0].shape
        for i, value in zip(indices, values):
            if value.shape != first:
                raise self._fail(f"Could not stack elements: element {int(i)} has shape "
                                 f"{list(value.shape)} but element {int(indices[0])} has "
                                 f"{list(first)}.")
        return np.stack(values)

    def scatter(self, indices, value) -> None:
        indices = np.asarray(indices).reshape(-1)
        value = np.asarray(value)
        if value.ndim == 0 or value.shape[0] != indices.size:
            raise self._fail(f"Expected value's first dimension ({value.shape[:1]}) to match "
                             f"the number of indices ({indices.size}).")
        if indices.size and self.dynamic_size:
            self._check_index(int(indices.max()), "write to")
        for i, row in zip(indices, value):
            self.write(int(i), row)

    def concat(self):
        values = [self.read(i) for i in range(len(self.values))]
        if not values:
            shape = self.element_shape
            if shape.ndims is None or not TensorShape(shape.as_list()[1:]).is_fully_defined():
                raise errors.UnimplementedError(
                    None, None, f"TensorArray {self.name}: concatenating an empty array needs "
                    "a known element shape.")
            return np.zeros([0] + shape.as_list()[1:], self.np_dtype), np.zeros([0], np.int64)
        for i, value in enumerate(values):
            if value.ndim == 0:
                raise self._fail(f"Concat saw a scalar shape at index {i} but requires at "
                                 "least vectors.")
            if value.shape[1:] != values[0].shape[1:]:
                raise self._fail(f"TensorArray has inconsistent shapes.  Index 0 has "
                                 f"(excepting dimension 0) shape: {_dims(values[0].shape[1:])} "
                                 f"but index {i} has (excepting dimension 0) shape: "
                                 f"{_dims(value.shape[1:])}")
        lengths = np.array([v.shape[0] for v in values], np.int64)
        return np.concatenate(values), lengths

    def split(self, value, lengths) -> None:
        value = np.asarray(value)
        lengths = np.asarray(lengths, np.int64).reshape(-1)
        if value.ndim == 0:
            raise self._fail("Expected value to be at least a vector.")
        if lengths.sum() != value.shape[0]:
            raise self._fail(f"Expected sum of lengths to be equal to values.shape[0], but sum "
                             f"of lengths is {int(lengths.sum())} and value's shape is "
                             f"{list(value.shape)}.")
        if len(lengths) > len(self.values) and not self.dynamic_size:
            raise self._fail(f"Expected lengths to be a vector of length {len(self.values)} "
                             f"but got length {len(lengths)}.")
        for i, part in enumerate(np.split(value, np.cumsum(lengths)[:-1])):
            self.write(i, part)

    def grad(self, source: str) -> TensorArrayStore:
        found = self.grads.get(source)
        if found is None:
            found = TensorArrayStore(f"{self.name}@{source}", self.dtype, len(self.values),
                                     False, False, self.element_shape, False, aggregate=True)
            self.grads[source] = found
        return found


# -- shape functions --------------------------------------------------------------------------

def _scalar(*args, **kwargs):
    return TensorShape([])


@TensorArrayV3.shape_fn
def _tensor_array_shape(size):
    return [TensorShape([]), TensorShape([])]


@TensorArrayGradV3.shape_fn
def _tensor_array_grad_shape(handle, flow_in):
    return [TensorShape([]), TensorShape([])]


TensorArrayWriteV3.shape_fn(_scalar)
TensorArrayScatterV3.shape_fn(_scalar)
TensorArraySplitV3.shape_fn(_scalar)
TensorArraySizeV3.shape_fn(_scalar)


@TensorArrayReadV3.shape_fn
def _read_shape(handle, index, flow_in):
    return TensorShape(None)


@TensorArrayGatherV3.shape_fn
def _gather_shape(handle, indices, flow_in, *, element_shape):
    n = indices._dim_list[0] if indices.ndims == 1 else None
    if element_shape is None or element_shape.ndims is None:
        return TensorShape(None)
    return TensorShape([n] + element_shape.as_list())


@TensorArrayConcatV3.shape_fn
def _concat_shape(handle, flow_in, *, element_shape_except0):
    if element_shape_except0 is None or element_shape_except0.ndims is None:
        return [TensorShape(None), TensorShape([None])]
    return [TensorShape([None] + element_shape_except0.as_list()), TensorShape([None])]


@TensorArrayCloseV3.shape_fn
def _close_shape(handle):
    return []


# -- kernels ----------------------------------------------------------------------------------

_FLOW = np.float32(0.0)


def _dims(shape) -> str:
    """A shape as TF's TensorArray messages print it: [2,3]."""
    return "[" + ",".join(str(d) for d in shape) + "]"


def _store(ctx, handle) -> TensorArrayStore:
    return step_resources.lookup(ctx, handle, KIND)


@TensorArrayV3.kernel(ctx=True, factory=True)
def _tensor_array_kernel(dtype, element_shape, dynamic_size, clear_after_read,
                         identical_element_shapes, tensor_array_name, node_name):
    base = tensor_array_name or node_name

    def create(ctx, size):
        size = int(size)
        if size < 0:
            raise errors.InvalidArgumentError(None, None, f"Size should be >= 0, got {size}")
        store = TensorArrayStore(base, dtype, size, dynamic_size, clear_after_read,
                                 element_shape, identical_element_shapes)
        handle = step_resources.create(ctx, KIND, base, store)
        store.name = handle[()].name  # as TF, errors name the array "foo_<n>"
        return handle, _FLOW

    return create


@TensorArrayGradV3.kernel(ctx=True, factory=True)
def _tensor_array_grad_kernel(source, node_name):
    def grad(ctx, handle, flow_in):
        parent = _store(ctx, handle)
        store = parent.grad(source)
        key = ("grad", source)
        cached = parent.grads.get(key)
        if cached is None:
            cached = step_resources.create(ctx, KIND, store.name, store)
            parent.grads[key] = cached
        return cached, flow_in

    return grad


@TensorArrayWriteV3.kernel(ctx=True)
def _write_kernel(ctx, handle, index, value, flow_in):
    _store(ctx, handle).write(index, value)
    return flow_in


def _grad_source(grad) -> str:
    """The name scope of the tf.gradients call a gradient comes from (one grad array each)."""
    tokens = grad.name.split("/")
    positions = [i for i, t in enumerate(tokens) if t.startswith("gradients")]
    if not positions:
        return "gradients"
    return "/".join(tokens[:positions[-1] + 1])


def _forward(op, flow) -> tensor_array_class.TensorArray:
    dtype = op.get_attr("T") if "T" in op._attrs else op.get_attr("dtype")
    return tensor_array_class.TensorArray(dtype, handle=op.inputs[0], flow=flow)


@TensorArrayWriteV3.gradient
def _write_grad(op, flow):
    index = op.inputs[1]
    grad_ta = _forward(op, flow).grad(_grad_source(flow), flow=flow)
    value = grad_ta.read(index)
    value.set_shape(op.inputs[2].shape)
    return [None, None, value, flow]


@TensorArrayReadV3.kernel(ctx=True)
def _read_kernel(ctx, handle, index, flow_in):
    return _store(ctx, handle).read(index)


@TensorArrayReadV3.gradient
def _read_grad(op, grad):
    handle, index, flow = op.inputs
    grad_ta = _forward(op, flow).grad(_grad_source(grad), flow=flow)
    return [None, None, grad_ta.write(index, grad).flow]


@TensorArrayGatherV3.kernel(ctx=True)
def _gather_kernel(ctx, handle, indices, flow_in, *, element_shape):
    return _store(ctx, handle).gather(indices, element_shape)


@TensorArrayGatherV3.gradient
def _gather_grad(op, grad):
    handle, indices, flow = op.inputs
    grad_ta = _forward(op, flow).grad(_grad_source(grad), flow=flow)
    return [None, None, grad_ta.scatter(indices, grad).flow]


@TensorArrayScatterV3.kernel(ctx=True)
def _scatter_kernel(ctx, handle, indices, value, flow_in):
    _store(ctx, handle).scatter(indices, value)
    return flow_in


@TensorArrayScatterV3.gradient
def _scatter_grad(op, flow):
    indices = op.inputs[1]
    grad_ta = _forward(op, flow).grad(_grad_source(flow), flow=flow)
    value = grad_ta.gather(indices)
    value.set_shape(op.inputs[2].shape)
    return [None, None, value, flow]


@TensorArrayConcatV3.kernel(ctx=True)
def _concat_kernel(ctx, handle, flow_in):
    return _store(ctx, handle).concat()


@TensorArrayConcatV3.gradient
def _concat_grad(op, grad, _):
    handle, flow = op.inputs
    lengths = op.outputs[1]
    grad_ta = _forward(op, flow).grad(_grad_source(grad), flow=flow)
    return [None, grad_ta.split(grad, lengths).flow]


@TensorArraySplitV3.kernel(ctx=True)
def _split_kernel(ctx, handle, value, lengths, flow_in):
    _store(ctx, handle).split(value, lengths)
    return flow_in


@TensorArraySplitV3.gradient
def _split_grad(op, flow):
    grad_ta = _forward(op, flow).grad(_grad_source(flow), flow=flow)
    value = grad_ta.concat()
    value.set_shape(op.inputs[1].shape)
    return [None, value, None, flow]


@TensorArraySizeV3.kernel(ctx=True)
def _size_kernel(ctx, handle, flow_in):
    return np.int32(len(_store(ctx, handle).values))


@TensorArrayCloseV3.kernel(ctx=True)
def _close_kernel(ctx, handle):
    step_resources.delete(ctx, handle)
