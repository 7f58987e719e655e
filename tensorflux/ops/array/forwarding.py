"""Ops that forward their input: Snapshot (a copy), GuaranteeConst (a promise that the value
does not change), RefIdentity (a ref passed through) and RefSelect (one of N refs).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape

__all__ = ["guarantee_const"]

Snapshot = define_op("Snapshot", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"])
GuaranteeConst = define_op("GuaranteeConst", inputs=["input: T"], outputs=["output: T"],
                           attrs=["T: type"], differentiable=False)
RefIdentity = define_op("RefIdentity", inputs=["input: Ref(T)"], outputs=["output: Ref(T)"],
                        attrs=["T: type"])
RefSelect = define_op("RefSelect", inputs=["index: int32", "inputs: N * Ref(T)"],
                      outputs=["output: Ref(T)"], attrs=["T: type", "N: int >= 1"],
                      differentiable=False)


def _same_shape(input):
    return input


for _op in (Snapshot, GuaranteeConst, RefIdentity):
    _op.shape_fn(_same_shape)


@Snapshot.kernel
def _snapshot_kernel(x):
    # A copy: later in-place updates of the source (a variable) do not show through.
    return np.array(x, copy=True)


@GuaranteeConst.kernel
def _guarantee_const_kernel(x):
    return x


class _FedRef:
    """A fed value standing in for a ref (feeding a variable's ref output passes an array)."""

    __slots__ = ("_value",)

    def __init__(self, value):
        self._value = value

    def read(self):
        return self._value


@RefIdentity.kernel
def _ref_identity_kernel(ref):
    return ref if hasattr(ref, "read") else _FedRef(ref)


@RefSelect.shape_fn
def _ref_select_shape(index, inputs):
    """As TF: the inputs' shape when all are fully defined and equal, else unknown."""
    index.with_rank(0)
    shape = inputs[0]
    if not shape.is_fully_defined() or \
            any(not other.is_fully_defined() or other != shape for other in inputs[1:]):
        return TensorShape(None)
    return shape


@RefSelect.kernel
def _ref_select_kernel(index, *refs):
    i = int(index)
    if not 0 <= i < len(refs):
        raise errors.InvalidArgumentError(
            None, None, f"RefSelect: index {i} is out of range [0, {len(refs)})")
    return refs[i]


@Snapshot.gradient
def _snapshot_grad(op, grad):
    return grad


@RefIdentity.gradient
def _ref_identity_grad(op, grad):
    return grad


def guarantee_const(input, name=None):
    """Promises the runtime that `input`'s value does not change during the step
    (`tf.guarantee_const`); forwards it unchanged. Not differentiable."""
    return GuaranteeConst(convert_to_tensor(input, name="input"), name=name)
