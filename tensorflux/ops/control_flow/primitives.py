"""Control-flow ops and the grouping helpers: Switch/Merge/Enter/Exit/NextIteration/LoopCond,
`tf.group`, `tf.tuple`, `tf.cond` and `tf.case`.

The primitives follow the paper (OSDI 2016, section 3.4): `Switch` forwards its data to one of
two outputs and makes the other *dead*; `Merge` forwards its first live input; `Enter`, `Exit`
and `NextIteration` move values into a loop frame, out of it, and into the next iteration. The
executor implements their semantics (runtime/executor.py); the kernels registered here are the
identities it would apply to live values, and run only for `LoopCond` and `ControlTrigger`.

`tf.cond` builds each branch inside a `CondContext` (control_flow_context.py), which routes every
value the branch reads from outside through a `Switch` on the predicate, so only the taken
branch runs, side effects included. `tf.while_loop` lives in while_loop.py.
"""

from __future__ import annotations

import builtins
import collections

from tensorflux.framework import dtypes, nest
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.op_def import define_op, get_op_def
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor import Operation, Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import constants as constant_ops
from tensorflux.ops.array.gradient_helpers import dense_gradient
from tensorflux.ops.control_flow import util

__all__ = ["no_op", "group", "tuple", "with_dependencies", "cond", "case", "switch_case"]

# -- op definitions ---------------------------------------------------------------------------

NoOp = define_op("NoOp", differentiable=False)


@NoOp.shape_fn
def _no_op_shape():
    return []


@NoOp.kernel
def _no_op_kernel():
    return None


Switch = define_op("Switch", inputs=["data: T", "pred: bool"],
                   outputs=["output_false: T", "output_true: T"], attrs=["T: type"],
                   is_control_flow=True)
# The Ref* variants forward variables (refs), which are never differentiated through.
RefSwitch = define_op("RefSwitch", inputs=["data: Ref(T)", "pred: bool"],
                      outputs=["output_false: Ref(T)", "output_true: Ref(T)"], attrs=["T: type"],
                      is_control_flow=True, allows_uninitialized_input=True,
                      differentiable=False)
Merge = define_op("Merge", inputs=["inputs: N * T"], outputs=["output: T", "value_index: int32"],
                  attrs=["T: type", "N: int >= 1"], is_control_flow=True)
RefMerge = define_op("RefMerge", inputs=["inputs: N * Ref(T)"],
                     outputs=["output: Ref(T)", "value_index: int32"],
                     attrs=["T: type", "N: int >= 1"], is_control_flow=True,
                     differentiable=False)
_ENTER_ATTRS = ["T: type", "frame_name: string", "is_constant: bool = False",
                "parallel_iterations: int = 10"]
Enter = define_op("Enter", inputs=["data: T"], outputs=["output: T"], attrs=_ENTER_ATTRS,
                  is_control_flow=True)
RefEnter = define_op("RefEnter", inputs=["data: Ref(T)"], outputs=["output: Ref(T)"],
                     attrs=_ENTER_ATTRS, is_control_flow=True, differentiable=False)
Exit = define_op("Exit", inputs=["data: T"], outputs=["output: T"], attrs=["T: type"],
                 is_control_flow=True)
RefExit = define_op("RefExit", inputs=["data: Ref(T)"], outputs=["output: Ref(T)"],
                    attrs=["T: type"], is_control_flow=True, differentiable=False)
NextIteration = define_op("NextIteration", inputs=["data: T"], outputs=["output: T"],
                          attrs=["T: type"], is_control_flow=True)
RefNextIteration = define_op("RefNextIteration", inputs=["data: Ref(T)"],
                             outputs=["output: Ref(T)"], attrs=["T: type"], is_control_flow=True,
                             differentiable=False)
LoopCond = define_op("LoopCond", inputs=["input: bool"], outputs=["output: bool"],
                     is_control_flow=True, differentiable=False)
ControlTrigger = define_op("ControlTrigger", is_control_flow=True, differentiable=False)


def _scalar_pred(pred: TensorShape) -> None:
    if pred.ndims is not None and pred.ndims != 0:
        raise ValueError(f"Shape must be rank 0 but is rank {pred.ndims}: the predicate must be "
                         f"a scalar, got shape {pred}")


@Switch.shape_fn
def _switch_shape(data, pred):
    _scalar_pred(pred)
    return [data, data]


RefSwitch.shape_fn(_switch_shape)


@Merge.shape_fn
def _merge_shape(inputs):
    """The shape all inputs share; dimensions on which they differ become unknown."""
    result = inputs[0]
    for shape in inputs[1:]:
        if result.ndims is None or shape.ndims is None or result.ndims != shape.ndims:
            result = TensorShape(None)
            break
        result = TensorShape([a if a == b else None
                              for a, b in zip(result.as_list(), shape.as_list())])
    return [result, TensorShape([])]


RefMerge.shape_fn(_merge_shape)


def _forward_shape(data):
    return data


for _op in (Exit, RefExit, NextIteration, RefNextIteration):
    _op.shape_fn(_forward_shape)


def _enter_shape(data, *, is_constant):
    """As TF: only a loop constant keeps its shape; `enter()` sets the shape of the others."""
    return data if is_constant else TensorShape(None)


Enter.shape_fn(_enter_shape)
RefEnter.shape_fn(_enter_shape)


@LoopCond.shape_fn
def _loop_cond_shape(input):
    _scalar_pred(input)
    return TensorShape([])


@ControlTrigger.shape_fn
def _control_trigger_shape():
    return []


def _forward_kernel(data):
    return data


@Switch.kernel
def _switch_kernel(data, pred):
    # The executor marks the untaken output dead; live values are the data itself.
    return data, data


RefSwitch.kernel(_switch_kernel)


def _resource_value(output):
    """`output`, or for a resource variable's handle a read of it through that branch (the
    gradient of a handle has the variable's value's shape and dtype)."""
    if output.dtype.base_dtype.name != "resource":
        return output
    source = output.op
    while source.type in ("Switch", "Identity", "Enter") and source.inputs:
        source = source.inputs[0].op
    return get_op_def("ReadVariableOp")(output, dtype=source.get_attr("dtype"))


@Switch.gradient
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
            grad = array_ops.zeros_like(_resource_value(op.outputs[index]), optimize=False)
        grads.append(dense_gradient(grad))
    merged, _ = merge(grads, name="cond_grad")
    return merged, None


@Merge.kernel
def _merge_kernel(*inputs):
    # The executor forwards the first *live* input; with every input live that is input 0.
    import numpy as np

    return inputs[0], np.int32(0)


RefMerge.kernel(_merge_kernel)
for _op in (Enter, RefEnter, Exit, RefExit, NextIteration, RefNextIteration, LoopCond):
    _op.kernel(_forward_kernel)


@Merge.gradient
def _merge_grad(op, grad, _):
    """d(input i) = the gradient, live only if input i was the one forwarded."""
    grad = dense_gradient(grad)
    pred = getattr(op, "_tfx_cond_pred", None)
    n = len(op._inputs)
    if pred is not None and n == 2:
        grad_false, grad_true = switch(grad, pred, name="cond_grad")
        return [grad_false, grad_true]
    index = op.outputs[1]
    if n == 2:
        taken = math_ops.cast(index, dtypes.bool_)
        grad_0, grad_1 = switch(grad, taken, name="cond_grad")
        return [grad_0, grad_1]
    return [switch(grad, math_ops.equal(index, i), name="cond_grad")[1] for i in range(n)]


# NOTE: loops are differentiated as a whole (while_gradients.py): tf.gradients hands a loop's
# exits and their gradients to it, and it builds the backward loop. The gradients of Enter,
# Exit and NextIteration below only run for loops built without a WhileContext (e.g. a loop
# imported from a GraphDef), which cannot be differentiated.
@Enter.gradient
def _enter_grad(op, grad):
    """Within one iteration (tf.gradients called inside the loop body) an Enter is an identity;
    across iterations loops are differentiated whole (while_gradients.py)."""
    if util.is_ancestor(op._control_flow_context, op.graph._control_flow_context) and \
            op._control_flow_context is not None:
        return grad
    return _loop_grad_unavailable(op, grad)


def _loop_grad_unavailable(op, *grads):
    raise LookupError(
        f"Cannot differentiate '{op.name}' ({op.type}): it belongs to a while loop that was "
        "not built by tf.while_loop in this process (no WhileContext is recorded on it), e.g. "
        "a loop imported from a GraphDef.")


for _op in (Exit, NextIteration):
    _op.gradient(_loop_grad_unavailable)


@ControlTrigger.kernel
def _control_trigger_kernel():
    return None


# -- low-level wrappers -----------------------------------------------------------------------

def _is_ref(tensor) -> bool:
    return isinstance(tensor, Tensor) and tensor.dtype.is_ref_dtype


def switch(data, pred, dtype=None, name=None):
    """Forwards `data` to `output_true` if `pred` else to `output_false` (the other is dead).

    Args:
        data: a Tensor (refs use RefSwitch) or IndexedSlices.
        pred: a scalar bool tensor.

    Returns:
        `(output_false, output_true)`.
    """
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "Switch") as scope:
        if isinstance(data, IndexedSlices):
            values = switch(data.values, pred, name="values")
            indices = switch(data.indices, pred, name="indices")
            shapes = switch(data.dense_shape, pred, name="dense_shape") \
                if data.dense_shape is not None else (None, None)
            return (IndexedSlices(values[0], indices[0], shapes[0]),
                    IndexedSlices(values[1], indices[1], shapes[1]))
        pred = convert_to_tensor(pred, dtype=dtypes.bool_)
        if _is_ref(data):
            return builtins.tuple(RefSwitch(data, pred, name=scope))
        data = convert_to_tensor(data, dtype=dtype)
        return builtins.tuple(Switch(data, pred, name=scope))


def merge(inputs, name=None):
    """Forwards the first available (live) input; returns `(output, value_index)`.

    Raises:
        ValueError: an input is None.
    """
    if any(x is None for x in inputs):
        raise ValueError(f"At least one of the merge inputs is None: {inputs}")
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "Merge") as scope:
        if all(isinstance(x, IndexedSlices) for x in inputs):
            values, index = merge([x.values for x in inputs], name="values")
            indices, _ = merge([x.indices for x in inputs], name="indices")
            shape = None
            if all(x.dense_shape is not None for x in inputs):
                shape, _ = merge([x.dense_shape for x in inputs], name="dense_shape")
            return IndexedSlices(values, indices, shape), index
        if any(isinstance(x, IndexedSlices) for x in inputs):
            inputs = [convert_to_tensor(x) for x in inputs]
        # the op's (output, value_index) namedtuple, as TF's merge returns
        if all(_is_ref(x) for x in inputs):
            return RefMerge(list(inputs), name=scope)
        return Merge([convert_to_tensor(x) for x in inputs], name=scope)


def enter(data, frame_name, is_constant=False, parallel_iterations=10, use_ref=True, name=None):
    """Makes `data` available in the child frame `frame_name` (RefEnter for refs)."""
    op = RefEnter if use_ref and _is_ref(data) else Enter
    result = op(data, frame_name=frame_name, is_constant=is_constant,
                parallel_iterations=parallel_iterations, name=name or "Enter")
    result.set_shape(convert_to_tensor(data).shape if not _is_ref(data) else data.shape)
    return result


def exit(data, name=None):  # noqa: A001 - TF's name
    """Makes `data` available in the parent frame (RefExit for refs; composites by part)."""
    if isinstance(data, SparseTensor):
        return SparseTensor(exit(data.indices), exit(data.values), exit(data.dense_shape))
    if isinstance(data, IndexedSlices):
        shape = None if data.dense_shape is None else exit(data.dense_shape)
        return IndexedSlices(exit(data.values), exit(data.indices), shape)
    return (RefExit if _is_ref(data) else Exit)(data, name=name or "Exit")


def next_iteration(data, name=None):
    """Makes `data` available to the next iteration of the frame."""
    return (RefNextIteration if _is_ref(data) else NextIteration)(
        data, name=name or "NextIteration")


def loop_cond(input, name=None):
    """Forwards the loop predicate; the executor's marker of a loop's termination condition."""
    return LoopCond(input, name=name or "LoopCond")


def control_trigger(name=None):
    """An op that runs once its control inputs are done, dead or alive."""
    return ControlTrigger(name=name or "ControlTrigger")


# -- grouping ---------------------------------------------------------------------------------

def no_op(name=None):
    """An op that does nothing; useful as a control-dependency anchor."""
    return NoOp(name=name)


def _as_op(item):
    if isinstance(item, Operation):
        return item
    if isinstance(item, Tensor):
        return item.op
    if hasattr(item, "op"):
        return item.op
    raise TypeError(f"Expected a Tensor or Operation, got {item!r}")


def group(*inputs, **kwargs):
    """An op that runs after all `inputs` (TF1 `tf.group`)."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Unknown keyword arguments: {', '.join(kwargs)}")
    flat = []
    for item in inputs:
        if isinstance(item, (list, builtins.tuple)) and not hasattr(item, "op"):
            flat.extend(item)
        elif isinstance(item, dict):
            flat.extend(item.values())
        elif item is not None:
            flat.append(item)
    ops = [_as_op(i) for i in flat]
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "group_deps") as scope:
        with graph.control_dependencies(ops):
            return NoOp(name=scope)


def tuple(tensors, name=None, control_inputs=None):  # noqa: A001 - TF1 name
    """Returns `tensors` gated so that none is available before all are computed.

    Entries may be Tensors, IndexedSlices, SparseTensors (each component is gated) or None.
    """

    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "tuple"):
        deps = []
        for t in tensors:
            if isinstance(t, (IndexedSlices, SparseTensor)):
                deps.extend(c for c in _expand_leaf(t) if c is not None)
            elif t is not None:
                deps.append(t)
        gate = group(*deps, *(control_inputs or []))
        result = []
        for t in tensors:
            if t is None:
                result.append(None)
                continue
            with graph.control_dependencies([gate]):
                if isinstance(t, (IndexedSlices, SparseTensor)):
                    parts = _expand_leaf(t)
                    result.append(_restore_composites(type(parts)(*[
                        None if c is None else constant_ops.identity(c) for c in parts])))
                else:
                    result.append(constant_ops.identity(t))
        return result


def with_dependencies(dependencies, output_tensor, name=None):
    """Returns `output_tensor`'s value, produced only after `dependencies` ran."""

    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "control_dependency") as scope:
        with graph.control_dependencies(dependencies):
            if isinstance(output_tensor, IndexedSlices):
                return IndexedSlices(constant_ops.identity(output_tensor.values, name=scope),
                                     output_tensor.indices, output_tensor.dense_shape)
            return constant_ops.identity(output_tensor, name=scope)


# -- cond and case ----------------------------------------------------------------------------

# Composite branch results travel through cond as their component tensors.
_SparseParts = collections.namedtuple("_SparseParts", ["indices", "values", "dense_shape"])
_SlicesParts = collections.namedtuple("_SlicesParts", ["values", "indices", "dense_shape"])
_SlicesPartsNoShape = collections.namedtuple("_SlicesPartsNoShape", ["values", "indices"])


def _expand_leaf(value):
    if isinstance(value, SparseTensor):
        return _SparseParts(value.indices, value.values, value.dense_shape)
    if isinstance(value, IndexedSlices):
        if value.dense_shape is None:
            return _SlicesPartsNoShape(value.values, value.indices)
        return _SlicesParts(value.values, value.indices, value.dense_shape)
    return value


def _restore_composites(value):
    if isinstance(value, _SparseParts):
        return SparseTensor(value.indices, value.values, value.dense_shape)
    if isinstance(value, (_SlicesParts, _SlicesPartsNoShape)):
        return IndexedSlices(value.values, value.indices, getattr(value, "dense_shape", None))
    if nest.is_nested(value):
        return nest._rebuild(value, [_restore_composites(v) for v in nest._children(value)])
    return value


def _expanding(fn):
    """`fn` with its SparseTensor / IndexedSlices results given as component namedtuples."""
    if not callable(fn):
        return fn
    return lambda: nest.map_structure(_expand_leaf, fn())


def _unpack_if_singleton(value):
    if isinstance(value, (list, builtins.tuple)) and len(value) == 1:
        return value[0]
    return value


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """Returns `true_fn()` if `pred` is true else `false_fn()`; only that branch runs.

    Both functions must return the same (nested) structure of tensors, TensorArrays or
    Operations (an Operation gives a bool tensor that is available once the op ran). Values a
    branch reads from outside are routed through a `Switch` on `pred`, and ops of a branch with
    no input are anchored to the branch's pivot, so the branch not taken does nothing.

    Args:
        pred: a scalar bool tensor (a Python bool is a TypeError).
        true_fn, false_fn: callables without arguments.
        strict: if False, a singleton list or tuple result is unpacked.
        name: name scope (default "cond").
        fn1, fn2: deprecated aliases of true_fn and false_fn.

    Returns:
        The merged results, in the structure `true_fn` returned.

    Raises:
        TypeError: pred is a Python bool, or a branch is not callable.
        ValueError: the branches return different structures or dtypes, or nothing.

    Example:
        >>> y = tf.cond(x > 0, lambda: x * x, lambda: -x)
    """
    # cycle: ops.control_flow.context imports this module (at import time)
    from tensorflux.ops.control_flow.context import CondContext

    true_fn = _pick_fn(true_fn, fn1, "true_fn", "fn1")
    false_fn = _pick_fn(false_fn, fn2, "false_fn", "fn2")
    if isinstance(pred, bool):
        raise TypeError("'pred' must not be a Python bool.")
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "cond"):
        pred = convert_to_tensor(pred, dtype=dtypes.bool_)
        p_false, p_true = switch(pred, pred)
        pivot_t = constant_ops.identity(p_true, name="switch_t")
        pivot_f = constant_ops.identity(p_false, name="switch_f")
        pred_id = constant_ops.identity(pred, name="pred_id")
        for tensor in (p_true, p_false, pivot_t, pivot_f, pred_id):
            graph.prevent_fetching(tensor.op)  # as TF1: one branch's pivots are not fetched
        context_t = CondContext(pred_id, pivot_t, branch=1)
        context_f = CondContext(pred_id, pivot_f, branch=0)
        original_t, flat_t = context_t.build_branch(_expanding(true_fn), "true_fn")
        original_f, flat_f = context_f.build_branch(_expanding(false_fn), "false_fn")
        if not strict:
            original_t = _unpack_if_singleton(original_t)
            original_f = _unpack_if_singleton(original_f)
        try:
            nest.assert_same_structure(original_t, original_f, check_types=True)
        except (TypeError, ValueError) as err:
            raise type(err)(f"'true_fn' and 'false_fn' must return the same structure: "
                            f"{err}") from None
        flat_t, flat_f = _widen_slice_indices(original_t, flat_t, flat_f)
        for t, f in zip(flat_t, flat_f):
            if t.dtype.base_dtype != f.dtype.base_dtype:
                raise ValueError(
                    "Outputs of 'true_fn' and 'false_fn' must have the same type(s). Received "
                    f"{t.dtype.base_dtype.name} from 'true_fn' and {f.dtype.base_dtype.name} "
                    "from 'false_fn'.")
        merges = []
        for t, f in zip(flat_t, flat_f):
            output, _ = merge([f, t])
            output.op._tfx_cond_pred = pred_id
            merges.append(output)
        merged = context_t.restore_tensor_arrays(original_t, merges)
        return _restore_composites(nest.pack_sequence_as(original_t, merged))


def _index_marks(value):
    """`value`'s structure with True at the indices of IndexedSlices results, else False."""
    if isinstance(value, (_SlicesParts, _SlicesPartsNoShape)):
        return value._replace(**{f: f == "indices" for f in value._fields})
    if nest.is_nested(value):
        return nest._rebuild(value, [_index_marks(v) for v in nest._children(value)])
    return False


def _widen_slice_indices(original, flat_t, flat_f):
    """IndexedSlices results whose branches disagree on int32/int64 indices merge as int64."""
    marks = nest.flatten(_index_marks(original))
    if len(marks) != len(flat_t):
        return flat_t, flat_f
    widths = {dtypes.int32, dtypes.int64}
    out_t, out_f = list(flat_t), list(flat_f)
    for i, (mark, t, f) in enumerate(zip(marks, flat_t, flat_f)):
        if mark and t.dtype.base_dtype != f.dtype.base_dtype and \
                {t.dtype.base_dtype, f.dtype.base_dtype} == widths:
            out_t[i] = math_ops.cast(t, dtypes.int64)
            out_f[i] = math_ops.cast(f, dtypes.int64)
    return out_t, out_f


def _pick_fn(fn, alias, name: str, alias_name: str):
    if fn is not None and alias is not None:
        raise TypeError(f"{name} and {alias_name} may not be set simultaneously.")
    fn = fn if fn is not None else alias
    if fn is None:
        raise TypeError(f"cond(): '{name}' argument required")
    if not callable(fn):
        raise TypeError(f"'{name}' must be callable.")
    return fn


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """Runs the fn of the first true predicate (or `default`): a chain of `tf.cond`s.

    Args:
        pred_fn_pairs: a list of `(pred, fn)` pairs, or a dict {pred: fn} (evaluated in the
            dict's order).
        default: fn run when no predicate is true; if None, the last pair's fn is the default.
        exclusive: if True, assert at run time that at most one predicate is true.
        strict: as for `cond`.
        name: name scope.

    Returns:
        The tensors returned by the chosen fn.

    Raises:
        TypeError: a pair is malformed or a fn is not callable.
        InvalidArgumentError (at run time): exclusive and several predicates are true.

    Example:
        >>> y = tf.case([(x < 0, lambda: -x), (x > 10, lambda: x - 10)], default=lambda: x)
    """
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) \
        else list(pred_fn_pairs)
    for pair in pairs:
        if not isinstance(pair, (list, builtins.tuple)) or len(pair) != 2:
            raise TypeError(f"Each entry in pred_fn_pairs must be a 2-tuple, got {pair!r}")
        pred, fn = pair
        if not callable(fn):
            raise TypeError(f"fn for pred {getattr(pred, 'name', pred)} must be callable.")
    if default is not None and not callable(default):
        raise TypeError("default must be callable.")
    if not pairs:
        if default is None:
            raise ValueError("case needs at least one (pred, fn) pair or a default.")
        return default()
    if default is None:
        *pairs, (_, default) = pairs
        if not pairs:
            return default()
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name):
        preds = [convert_to_tensor(p, dtype=dtypes.bool_) for p, _ in pairs]
        if exclusive:
            preds = _exclusive_check(preds)
        fn = default
        for pred, branch in reversed(list(zip(preds, [f for _, f in pairs]))):
            fn = _case_step(pred, branch, fn, strict)
        return fn()


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """Runs `branch_fns[branch_index]` (or `default` when out of range; the last fn if None).

    Args:
        branch_index: an int32 scalar tensor.
        branch_fns: a list of callables, or of (int, callable) pairs, or a dict {int: fn}.
        default: the fn for indices with no branch.

    Returns:
        The tensors returned by the chosen fn.

    Example:
        >>> y = tf.switch_case(i, [lambda: a, lambda: b], default=lambda: c)
    """
    if isinstance(branch_fns, dict):
        pairs = sorted(branch_fns.items())
    elif branch_fns and isinstance(branch_fns[0], (list, builtins.tuple)):
        pairs = list(branch_fns)
    else:
        pairs = list(enumerate(branch_fns))
    if not pairs:
        raise ValueError("branch_fns must not be empty.")
    for key, fn in pairs:
        if not isinstance(key, int) or not callable(fn):
            raise TypeError(f"branch_fns entries must be (int, callable), got {(key, fn)!r}")
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name):
        index = convert_to_tensor(branch_index, dtype=dtypes.int32, name="branch_index")
        preds = [(math_ops.equal(index, key), fn) for key, fn in pairs]
        return case(preds, default=default or pairs[-1][1], name="case")


def _case_step(pred, branch, otherwise, strict):
    return lambda: cond(pred, branch, otherwise, strict=strict)


def _exclusive_check(preds):
    """Gates every predicate on a run-time check that at most one of them is true."""

    stacked = array_ops.stack(preds, name="preds")
    count = math_ops.reduce_sum(math_ops.cast(stacked, dtypes.int32), name="num_true")
    checked = _assert_at_most_one(count, stacked)
    graph = graph_mod.get_default_graph()
    with graph.control_dependencies([checked]):
        return [array_ops.identity(p) for p in preds]


def _assert_at_most_one(count, stacked):
    # Always a run-time Assert (as TF): predicates known at graph construction still build.
    # cycle: ops.debug.logging imports this module (at import time)
    from tensorflux.ops.debug import logging as logging_ops

    with graph_mod.get_default_graph().name_scope("exclusive_check"):
        return logging_ops.Assert(
            math_ops.less_equal(count, 1),
            ["Input error: exclusive=True but more than 1 conditions evaluated as True:",
             stacked])
