"""TF's control_flow_ops helpers over refs, reference variables and composites: `_Identity`,
`_Enter`, `ref_switch`, `ref_merge`, `ref_select` and `_SwitchRefOrTensor` (TF1 code and TF's
kernel tests reach them through control_flow_ops). They build the ops of `primitives` and
`array.forwarding`; SparseTensor / IndexedSlices go through component by component.
"""

from __future__ import annotations

import builtins

from tensorflux.framework import dtypes
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.array import constants as constant_ops
from tensorflux.ops.array import forwarding
from tensorflux.ops.control_flow.primitives import (
    RefMerge,
    RefSwitch,
    _is_ref,
    enter,
    switch,
)

__all__: list = []


def _per_component(fn, data):
    if isinstance(data, SparseTensor):
        return SparseTensor(fn(data.indices), fn(data.values), fn(data.dense_shape))
    if isinstance(data, IndexedSlices):
        shape = None if data.dense_shape is None else fn(data.dense_shape)
        return IndexedSlices(fn(data.values), fn(data.indices), shape)
    return fn(data)


def _ref_or_tensor(data):
    if isinstance(data, (Tensor, SparseTensor, IndexedSlices)):
        return data
    if hasattr(data, "_ref"):  # a reference variable enters as its ref
        return data._ref()
    return convert_to_tensor(data)


def _Identity(data, name=None):  # noqa: N802 - TF's name
    """Identity that keeps refs (RefIdentity) and works on SparseTensor / IndexedSlices."""
    def one(t):
        return forwarding.RefIdentity(t, name=name or "Identity") if _is_ref(t) \
            else constant_ops.identity(t, name=name)
    return _per_component(one, _ref_or_tensor(data))


def _Enter(data, frame_name, is_constant=False, parallel_iterations=10,  # noqa: N802
           use_ref=True, use_input_shape=True, name=None):
    """`enter` for tensors, refs, variables and composites (TF's control_flow_ops._Enter)."""
    def one(t):
        result = enter(t, frame_name, is_constant, parallel_iterations, use_ref, name)
        if not use_input_shape:
            result._shape = TensorShape(None)
        return result
    return _per_component(one, _ref_or_tensor(data))


def ref_switch(data, pred, name=None):
    """Switch of a ref: `(output_false, output_true)` both refs to `data`'s buffer."""
    return builtins.tuple(RefSwitch(_ref_or_tensor(data), convert_to_tensor(pred, dtypes.bool_),
                                    name=name or "RefSwitch"))


def ref_merge(inputs, name=None):
    """Merge of refs: `(output, value_index)`."""
    return RefMerge([_ref_or_tensor(x) for x in inputs], name=name or "RefMerge")


def ref_select(index, inputs, name=None):
    """The ref `inputs[index]` (all inputs refs of one dtype)."""
    return forwarding.RefSelect(convert_to_tensor(index, dtypes.int32),
                                [_ref_or_tensor(x) for x in inputs], name=name or "RefSelect")


def _SwitchRefOrTensor(data, pred, name="Switch"):  # noqa: N802 - TF's name
    """RefSwitch for refs and reference variables, else `switch`."""
    data = _ref_or_tensor(data)
    if _is_ref(data):
        return ref_switch(data, pred, name=name)
    return switch(data, pred, name=name)
