"""Gradients of the control-flow primitives (the paper's section 4.4 of the whitepaper).

- Conditionals: the gradient of `Switch` is a `Merge` of its branch gradients, and the gradient
  of `Merge` is a `Switch` of its gradient on the same predicate (the branch taken forward is
  the branch that carries the gradient backward; the other one is dead).
- Loops are differentiated as a whole by control_flow_state.py: `tf.gradients` hands it a
  loop's exits and their gradients, and it builds the backward loop. The gradient functions of
  `Enter`, `Exit` and `NextIteration` registered here only run for loops built without a
  `WhileContext` (e.g. a loop imported from a GraphDef), which cannot be differentiated.
"""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops.control_flow import primitives as cf


def _dense(grad):
    return convert_to_tensor(grad) if isinstance(grad, IndexedSlices) else grad


@cf.Switch.gradient
def _switch_grad(op, grad_false, grad_true):
    """d(data) = Merge(grad_false, grad_true): whichever branch ran carries the gradient.

    An output that received no gradient gets zeros computed from that output (a ZerosLike of
    it, dead exactly when that branch was not taken), so the Merge always has a live input.
    """
    if grad_false is None and grad_true is None:
        return None, None
    grads = []
    for index, grad in enumerate((grad_false, grad_true)):
        if grad is None:
            from tensorflux.ops import array as array_ops

            grad = array_ops.zeros_like(_resource_value(op.outputs[index]), optimize=False)
        grads.append(_dense(grad))
    merged, _ = cf.merge(grads, name="cond_grad")
    return merged, None



def _resource_value(output):
    """`output`, or for a resource variable's handle a read of it through that branch (the
    gradient of a handle has the variable's value's shape and dtype)."""
    if output.dtype.base_dtype.name != "resource":
        return output
    from tensorflux.framework.op_def import get_op_def

    source = output.op
    while source.type in ("Switch", "Identity", "Enter") and source.inputs:
        source = source.inputs[0].op
    return get_op_def("ReadVariableOp")(output, dtype=source.get_attr("dtype"))


@cf.Merge.gradient
def _merge_grad(op, grad, _):
    """d(input i) = the gradient, live only if input i was the one forwarded."""
    grad = _dense(grad)
    pred = getattr(op, "_tfx_cond_pred", None)
    n = len(op._inputs)
    if pred is not None and n == 2:
        grad_false, grad_true = cf.switch(grad, pred, name="cond_grad")
        return [grad_false, grad_true]
    from tensorflux.ops import math as math_ops

    index = op.outputs[1]
    if n == 2:
        taken = math_ops.cast(index, dtypes.bool_)
        grad_0, grad_1 = cf.switch(grad, taken, name="cond_grad")
        return [grad_0, grad_1]
    return [cf.switch(grad, math_ops.equal(index, i), name="cond_grad")[1] for i in range(n)]



@cf.Enter.gradient
def _enter_grad(op, grad):
    """Within one iteration (tf.gradients called inside the loop body) an Enter is an identity;
    across iterations loops are differentiated whole (control_flow_state.py)."""
    from tensorflux.ops.control_flow import util

    if util.is_ancestor(op._control_flow_context, op.graph._control_flow_context) and \
            op._control_flow_context is not None:
        return grad
    return _loop_grad_unavailable(op, grad)


def _loop_grad_unavailable(op, *grads):
    raise LookupError(
        f"Cannot differentiate '{op.name}' ({op.type}): it belongs to a while loop that was "
        "not built by tf.while_loop in this process (no WhileContext is recorded on it), e.g. "
        "a loop imported from a GraphDef.")


for _op in (cf.Exit, cf.NextIteration):
    _op.gradient(_loop_grad_unavailable)


from tensorflux.ops.control_flow import while_gradients as control_flow_state  # noqa: E402,F401 - installs the loop hooks
