"""`_AssignMovingAverage(ref, value, factor)`: ExponentialMovingAverage's update of one shadow
variable, `AssignSub(ref, Mul(Sub(ref, value), factor))` (tf.train.assign_moving_average), as
one node (runtime/moving_averages.py makes it; users never build it).

The compiled kernel (lib/numerics/update_jit.py `moving_average`) does the three passes in one,
with the same operations in the same order (bit-identical), and keeps the GIL for variables
below `update_jit.MOVING_AVERAGE_HOLD_ELEMENTS` (4M elements): the three NumPy passes each
release it, and with Python threads busy (an input pipeline's preprocessing) each release
costs the step a wait of one or more 5 ms switch intervals to get it back. Otherwise
(another dtype, broadcasting, a non-scalar factor, TFX_JIT=0) the unfused kernels' NumPy
passes run, with their values and errors.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.lib.numerics import update_jit

__all__ = ["OP_NAME", "assign_moving_average"]

OP_NAME = "_AssignMovingAverage"

AssignMovingAverage = define_op(
    OP_NAME, inputs=["ref: Ref(T)", "value: T", "factor: T"], outputs=["output_ref: Ref(T)"],
    attrs=["T: {float32, float64}", "use_locking: bool = False"],
    stateful=True, differentiable=False)


@AssignMovingAverage.shape_fn
def _shape(ref, value, factor, *, use_locking):
    return ref.merge_with(value)


def assign_moving_average(buffer: np.ndarray, value: np.ndarray, factor) -> None:
    """In place: `buffer -= (buffer - value) * factor`, as Sub, Mul and AssignSub compute it.

    Raises:
        InvalidArgumentError: the update's shape differs from the variable's (AssignSub's).
    """
    value = np.asarray(value)
    if np.ndim(factor) == 0 and update_jit.moving_average_supports(buffer, value):
        update_jit.moving_average(buffer, value, factor)
        return
    delta = np.multiply(np.subtract(buffer, value), factor)
    if delta.shape != buffer.shape:
        raise errors.InvalidArgumentError(
            None, None, f"AssignSub requires shapes of both tensors to match. lhs shape= "
                        f"{list(buffer.shape)} rhs shape= {list(delta.shape)}")
    np.subtract(buffer, delta, out=buffer)


@AssignMovingAverage.kernel
def _kernel(ref, value, factor, *, use_locking):
    buffer = ref.read()
    if use_locking:
        with ref.lock:
            assign_moving_average(buffer, value, factor)
    else:
        assign_moving_average(buffer, value, factor)
    return ref
