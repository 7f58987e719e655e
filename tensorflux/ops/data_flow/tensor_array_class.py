"""`tf.TensorArray`: a step-scoped array of tensors for values produced one iteration at a time.

Each method adds one op of the TensorArrayV3 family (tensor_array.py) and returns a new
TensorArray object with the op's `flow_out` (or the value read); all objects derived from one
TensorArray share its handle and its statically inferred element shape. In a while loop the
TensorArray is passed as a loop variable: only its flow crosses iterations.

The gradients of these ops are registered with the ops, in tensor_array.py.
"""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import constants as constant_ops
from tensorflux.ops.data_flow import tensor_array as k

__all__ = ["TensorArray"]


class TensorArray:
    """A TF1 `tf.TensorArray` (see the module docstring).

    Example:
        >>> ta = tf.TensorArray(tf.float32, size=3)
        >>> ta = ta.write(0, x).write(1, y).write(2, z)
        >>> stacked = ta.stack()   # shape [3] + x.shape
    """

    _tfx_is_tensor_array = True

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        graph = graph_mod.get_default_graph()
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._dynamic_size = bool(dynamic_size)
        self._infer_shape = infer_shape
        self._element_shape = [as_shape(element_shape) if element_shape is not None
                               else TensorShape(None)]
        if handle is not None:
            if flow is None:
                raise ValueError("flow must not be None if handle is not None.")
            if size is not None:
                raise ValueError("Cannot provide both a handle and size at the same time")
            self._handle = handle
            self._flow = flow
            self._size = None
            return
        if flow is not None:
            raise ValueError("Cannot provide both a flow and no handle")
        if size is None:
            raise ValueError("Size must be provided if handle is not provided")
        with graph.name_scope(name or "TensorArray") as scope:
            size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
            static = constant_value(size)
            self._size = int(static) if static is not None else None
            clear = True if clear_after_read is None else bool(clear_after_read)
            self._handle, self._flow = k.TensorArrayV3(
                size, dtype=self._dtype, element_shape=self._element_shape[0],
                dynamic_size=self._dynamic_size, clear_after_read=clear,
                identical_element_shapes=bool(infer_shape),
                tensor_array_name=tensor_array_name or "", name=scope)
        del colocate_with_first_write_call

    # -- properties ------------------------------------------------------------------------

    @property
    def handle(self) -> Tensor:
        return self._handle

    @property
    def flow(self) -> Tensor:
        return self._flow

    @property
    def dtype(self):
        return self._dtype

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape[0]

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic_size

    def _with_flow(self, flow) -> TensorArray:
        """A TensorArray sharing this one's handle and shape inference, with `flow`."""
        result = TensorArray.__new__(TensorArray)
        result._dtype = self._dtype
        result._dynamic_size = self._dynamic_size
        result._infer_shape = self._infer_shape
        result._element_shape = self._element_shape
        result._handle = self._handle
        result._flow = flow
        result._size = self._size
        return result

    def _merge_element_shape(self, shape: TensorShape) -> None:
        if not self._infer_shape:
            return
        current = self._element_shape[0]
        if not current.is_compatible_with(shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected {current} (and "
                             "infer_shape=True)")
        self._element_shape[0] = current.merge_with(shape)

    def _scope(self, name, default):
        graph = graph_mod.get_default_graph()
        return graph.name_scope(name or default)

    def _colocate(self):
        return graph_mod.get_default_graph().colocate_with(self._handle.op)

    # -- methods ---------------------------------------------------------------------------

    def identity(self) -> TensorArray:
        """A TensorArray whose flow is an identity of this one's (for control dependencies)."""

        return self._with_flow(constant_ops.identity(self._flow))

    def grad(self, source, flow=None, name=None) -> TensorArray:
        """The gradient TensorArray of this one for the gradient call named `source`."""
        flow = self._flow if flow is None else flow
        with self._scope(name, "TensorArrayGrad"), self._colocate():
            handle, flow_out = k.TensorArrayGradV3(self._handle, flow, source=source)
        result = TensorArray(self._dtype, handle=handle, flow=flow_out,
                             infer_shape=self._infer_shape)
        result._element_shape = self._element_shape
        return result

    def read(self, index, name=None) -> Tensor:
        """The element at `index`."""
        with self._scope(name, "TensorArrayRead"), self._colocate():
            value = k.TensorArrayReadV3(self._handle, index, self._flow, dtype=self._dtype)
        if self._element_shape[0].ndims is not None:
            value.set_shape(self._element_shape[0])
        return value

    def write(self, index, value, name=None) -> TensorArray:
        """Writes `value` at `index`; returns the TensorArray with the new flow."""
        with self._scope(name, "TensorArrayWrite"):
            # NOTE: as TF, a value of another dtype is refused by the kernel (run time).
            value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            self._merge_element_shape(value.shape)
            with self._colocate():
                flow = k.TensorArrayWriteV3(self._handle, index, value, self._flow)
        return self._with_flow(flow)

    def stack(self, name=None) -> Tensor:
        """All elements stacked along a new first dimension."""

        with self._scope(name, "TensorArrayStack"):
            # As TF: <scope>/TensorArrayStack/TensorArrayGatherV3 (no scope of gather's own).
            return self.gather(math_ops.range(0, self.size()), name=name)

    def gather(self, indices, name=None) -> Tensor:
        """The elements at `indices`, stacked (one op named `name`, TensorArrayGatherV3 by
        default, as TF)."""
        with self._colocate():
            element_shape = self._element_shape[0]
            value = k.TensorArrayGatherV3(self._handle, indices, self._flow, dtype=self._dtype,
                                          element_shape=element_shape, name=name)
        if element_shape.ndims is not None:
            static = constant_value(convert_to_tensor(indices))
            first = int(static.size) if static is not None else None
            value.set_shape(TensorShape([first] + element_shape.as_list()))
        return value

    def concat(self, name=None) -> Tensor:
        """All elements concatenated along their first dimension."""
        with self._scope(name, "TensorArrayConcat"), self._colocate():
            shape = self._element_shape[0]
            except0 = TensorShape(shape.as_list()[1:]) if shape.ndims else TensorShape(None)
            value, _ = k.TensorArrayConcatV3(self._handle, self._flow, dtype=self._dtype,
                                             element_shape_except0=except0)
        return value

    def unstack(self, value, name=None) -> TensorArray:
        """Writes `value[i]` to element i for each i; returns the new TensorArray."""

        with self._scope(name, "TensorArrayUnstack"):
            value = convert_to_tensor(value, dtype=self._dtype, name="value")
            if value.shape.ndims is not None and value.shape.ndims > 0 and \
                    value.shape._dim_list[0] is not None:
                indices = math_ops.range(0, value.shape._dim_list[0])
            else:
                indices = math_ops.range(0, array_ops.shape(value)[0])
            return self.scatter(indices, value, name="scatter")

    def scatter(self, indices, value, name=None) -> TensorArray:
        """Writes `value[i]` to element `indices[i]`; returns the new TensorArray."""
        with self._scope(name, "TensorArrayScatter"):
            value = convert_to_tensor(value, dtype=self._dtype, name="value")
            if value.shape.ndims is not None and value.shape.ndims > 0:
                self._merge_element_shape(TensorShape(value.shape.as_list()[1:]))
            with self._colocate():
                flow = k.TensorArrayScatterV3(self._handle, indices, value, self._flow)
        return self._with_flow(flow)

    def split(self, value, lengths, name=None) -> TensorArray:
        """Splits `value` along dimension 0 into pieces of `lengths`, one per element."""
        with self._scope(name, "TensorArraySplit"):
            value = convert_to_tensor(value, dtype=self._dtype, name="value")
            lengths = convert_to_tensor(lengths, name="lengths")
            if lengths.dtype.base_dtype != dtypes.int64:  # TF casts int32 lengths
                lengths = math_ops.cast(lengths, dtypes.int64)
            static = constant_value(lengths)
            if value.shape.ndims is not None and value.shape.ndims > 0 and static is not None \
                    and static.size and bool((static == static.reshape(-1)[0]).all()):
                self._merge_element_shape(
                    TensorShape([int(static.reshape(-1)[0])] + value.shape.as_list()[1:]))
            with self._colocate():
                flow = k.TensorArraySplitV3(self._handle, value, lengths, self._flow)
        return self._with_flow(flow)

    def size(self, name=None) -> Tensor:
        """The number of elements (static when the size is fixed and known)."""
        if not self._dynamic_size and self._size is not None:
            return convert_to_tensor(self._size, dtype=dtypes.int32, name=name)
        with self._scope(name, "TensorArraySize"), self._colocate():
            return k.TensorArraySizeV3(self._handle, self._flow)

    def close(self, name=None):
        """Releases the array (later uses fail)."""
        with self._scope(name, "TensorArrayClose"), self._colocate():
            return k.TensorArrayCloseV3(self._handle)

    def __repr__(self) -> str:
        return f"<tf.TensorArray {self._handle.op.name} dtype={self._dtype.name}>"
