"""Assignment to a slice of a variable: `v[1:3].assign(x)` builds a `StridedSliceAssign`.

Slicing a Variable gives a `StridedSlice` of its snapshot whose tensor also has `.assign`
(as TF's sliced variables do); the op writes the slice of the variable's buffer in place.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops.array import slicing

__all__: list = []

StridedSliceAssign = define_op(
    "StridedSliceAssign",
    inputs=["ref: Ref(T)", "begin: Index", "end: Index", "strides: Index", "value: T"],
    outputs=["output_ref: Ref(T)"],
    attrs=["T: type", f"Index: {slicing._INDEX_TYPES}"] + slicing._MASK_ATTRS,
    stateful=True, differentiable=False)


@StridedSliceAssign.shape_fn
def _strided_slice_assign_shape(ref, begin, end, strides, value):
    return ref


@StridedSliceAssign.kernel
def _strided_slice_assign_kernel(ref, begin, end, strides, value, *, begin_mask, end_mask,
                                 ellipsis_mask, new_axis_mask, shrink_axis_mask):
    masks = dict(begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                 new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask)
    buffer = ref.read()
    spec = slicing.slice_spec(begin, end, strides, **masks)
    try:
        target = buffer[spec]
    except IndexError as err:
        raise slicing._slice_error(buffer, spec, err) from None
    if np.shape(target) != np.shape(value):
        raise errors.InvalidArgumentError(
            None, None, f"sliced l-value shape {list(np.shape(target))} does not match r-value "
                        f"shape {list(np.shape(value))} (variable '{ref.name}'). Automatic "
                        "broadcasting not yet implemented.")
    buffer[spec] = value
    return ref


class VariableSlice(Tensor):
    """A slice of a variable's value that can also be assigned (`v[0, 1:].assign(x)`)."""

    __slots__ = ()

    def assign(self, value, name=None):
        """Writes `value` into this slice of the variable; returns the variable's ref."""
        op = self.op
        var = op._tfx_sliced_variable
        value = convert_to_tensor(value, dtype=self.dtype.base_dtype, name="value")
        masks = {m: op.get_attr(m) for m in slicing._MASKS}
        _, begin, end, strides = op.inputs
        return StridedSliceAssign(var._ref(), begin, end, strides, value,
                                  name=name or "strided_slice_assign", **masks)


def slice_variable(var, slice_spec):
    """`var[slice_spec]`: the slice of `var.value()`, assignable when it is a strided slice."""
    result = slicing._slice_helper(var.value(), slice_spec, var=var)
    if isinstance(result, Tensor) and type(result) is Tensor and \
            result.op.type == "StridedSlice":
        result.op._tfx_sliced_variable = var
        result.__class__ = VariableSlice
    return result
