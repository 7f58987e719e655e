"""Constant folding of a step's runtime Nodes, once per plan (rule 1 of runtime/rewrites.py).

`fold_constants(nodes, protected, limit)` evaluates, at plan time, every value the step could
compute without its feeds or state, as TF's grappler does:

- a stateless node with a CPU kernel whose inputs are all constant is evaluated with that
  kernel, if its result is at most `limit` bytes; an op may give its own plan-time kernel
  (`op_def.fold_kernel`, a stateless py_func's), used even when it has no inputs;
- `Shape`, `ShapeN`, `Size` and `Rank` of a tensor whose static shape is fully known (only the
  rank for `Rank`) are evaluated by their own kernels on a stand-in array of that shape (no
  memory), so the folded value is the one the kernel would compute. The tensor must come from
  a stateless node that touches no reference (a variable may be assigned a value of another
  shape) and must not be fed in this signature (a fed value reaches the step as an `_Arg`,
  which has no static shape here). In a graph with control flow the folded value keeps a
  control input on that tensor's producer, so it stays in its frame and iteration and is dead
  when the producer is.

The frontier of each folded subgraph is replaced by `Const` nodes that keep the control inputs
of the subgraph (so a constant in an untaken branch stays dead). A kernel that fails is left
alone: the step reports the error when it runs.

`simplify_arithmetic(nodes, protected)` then removes multiplications by one (`Mul(x, 1)`,
`Mul(1, x)`, `RealDiv(x, 1)`, `Div(x, 1)`) of real numbers when the result has `x`'s shape, and
`Reshape`/`BroadcastTo` of `x` to a constant shape that is `x`'s own (static shapes, fully
known): the node becomes an `Identity` of `x` (bit for bit the same value), which the identity
rewrite or the fast path then drop. `x + 0` stays: `-0.0 + 0.0` is `+0.0`.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.op_def import get_op_def
from tensorflux.runtime import node_edges
from tensorflux.runtime.graph_ir import Node
from tensorflux.runtime.partition import CONTROL_FLOW_OPS, topological_order

__all__ = ["DEFAULT_MAX_FOLDED_BYTES", "fold_constants", "simplify_arithmetic", "is_pure",
           "touches_refs", "NEVER_TOUCHED"]

DEFAULT_MAX_FOLDED_BYTES = 10 * 1024 * 1024

NEVER_TOUCHED = frozenset({"_Arg", "_Send", "_Recv", "_HostSend", "_HostRecv", "Placeholder",
                           "PlaceholderV2", "PlaceholderWithDefault"}) | CONTROL_FLOW_OPS

# Ops whose value depends only on their input's static shape (its rank for Rank).
_SHAPE_OPS = frozenset({"Shape", "ShapeN", "Size", "Rank"})

# x * 1 == x bit for bit for these (complex numbers are not: (a+bi)(1+0i) with b = inf).
_REAL_TYPES = frozenset({dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64,
                         dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8,
                         dtypes.uint16, dtypes.uint32, dtypes.uint64})
_TIMES_ONE = {"Mul": (0, 1), "RealDiv": (1,), "Div": (1,)}  # op -> positions the one may take


def touches_refs(node) -> bool:
    """Whether `node` yields or reads a reference (a variable's buffer)."""
    if any(dtype.is_ref_dtype for dtype in node.output_dtypes):
        return True
    return any(src.output_dtypes[idx].is_ref_dtype for src, idx in node.inputs)


def is_pure(node) -> bool:
    """Stateless, no feed, transfer or control-flow op, touching no reference."""
    return not node.op_def.is_stateful and node.op not in NEVER_TOUCHED and \
        not touches_refs(node)


def _const_attrs(value: np.ndarray, dtype, like) -> dict:
    attrs = {"value": value, "dtype": dtype}
    if like is not None and like.attrs.get("_class"):
        attrs["_class"] = like.attrs["_class"]
    return attrs


def _foldable_kernel(node):
    if not is_pure(node) or not node.output_dtypes:
        return None
    folding = getattr(node.op_def, "fold_kernel", None)
    if folding is not None:
        return folding  # the op's own plan-time kernel (a stateless py_func), inputs or not
    if not node.inputs:
        return None
    kernel_def = node.op_def.kernels.get("CPU")
    if kernel_def is None or kernel_def.ctx or kernel_def.asynchronous:
        return None
    return kernel_def


def _const_value(node):
    value = node.attrs.get("value")
    dtype = node.attrs.get("dtype")
    if value is None or dtype is None:
        return None
    array = np.asarray(value)
    np_dtype = np.dtype(dtype.base_dtype.as_numpy_dtype)
    if array.dtype != np_dtype and np_dtype != np.object_:
        array = array.astype(np_dtype)
    return (array,)


def static_shape(node, index: int):
    """The static shape (a TensorShape) of output `index` of `node`, or None if unknown.

    Only nodes read from the client graph have one; a rewrite that changes what a node
    computes must not keep its `source_op` (rules after folding may; folding runs first)."""
    op = node.source_op
    if op is None or len(op._outputs) != len(node.output_dtypes) or index >= len(op._outputs):
        return None
    return op._outputs[index].shape


def _static_bytes(node) -> int:
    """Bytes of the node's outputs by their static shapes (0 when some shape is unknown)."""
    total = 0
    for index, dtype in enumerate(node.output_dtypes):
        shape = static_shape(node, index)
        if shape is None or not shape.is_fully_defined():
            return 0
        itemsize = np.dtype(dtype.base_dtype.as_numpy_dtype).itemsize
        total += int(np.prod(shape.as_list(), dtype=np.int64)) * max(itemsize, 1)
    return total


def _as_arrays(result, node, limit):
    outputs = (result,) if len(node.output_dtypes) == 1 else tuple(result)
    arrays = []
    for value, dtype in zip(outputs, node.output_dtypes):
        array = np.asarray(value)
        np_dtype = np.dtype(dtype.base_dtype.as_numpy_dtype)
        if array.dtype != np_dtype and np_dtype != np.object_:
            array = array.astype(np_dtype)
        size = array.size * 8 if array.dtype == np.object_ else array.nbytes
        if size > limit:
            return None
        arrays.append(array)
    return tuple(arrays)


def _evaluate(node, kernel_def, values, limit):
    if _static_bytes(node) > limit:
        return None  # NOTE: known too big before running the kernel (tf.zeros of a big shape)
    args = [values[id(src)][idx] for src, idx in node.inputs]
    try:
        kernel = kernel_def.instantiate(node.attrs, node.name)
        result = kernel(*args)
    except Exception:  # noqa: BLE001 - leave the node; the step reports the error
        return None
    return _as_arrays(result, node, limit)


def _stand_in(src, index: int, rank_only: bool):
    """An array of the static shape of src:index (zero strides: no memory), or None."""
    if not is_pure(src) or not src.output_dtypes:
        return None
    shape = static_shape(src, index)
    if shape is None or shape.ndims is None:
        return None
    dims = shape.as_list()
    if rank_only:
        dims = [1] * len(dims)
    elif not shape.is_fully_defined():
        return None
    return np.broadcast_to(np.zeros((), np.float32), dims)


def _evaluate_shape_op(node, limit):
    """Runs a Shape/ShapeN/Size/Rank kernel on stand-ins of its inputs' static shapes."""
    if node.op not in _SHAPE_OPS or not is_pure(node) or not node.inputs:
        return None
    kernel_def = node.op_def.kernels.get("CPU")
    if kernel_def is None or kernel_def.ctx or kernel_def.asynchronous:
        return None
    args = []
    for src, index in node.inputs:
        stand_in = _stand_in(src, index, rank_only=node.op == "Rank")
        if stand_in is None:
            return None
        args.append(stand_in)
    try:
        result = kernel_def.instantiate(node.attrs, node.name)(*args)
    except Exception:  # noqa: BLE001 - leave the node; the step reports the error
        return None
    return _as_arrays(result, node, limit)


def _merged_controls(groups) -> list:
    keep = []
    for group in groups:
        for control in group:
            if control not in keep:
                keep.append(control)
    return keep


def fold_constants(nodes, protected: set, limit: int = DEFAULT_MAX_FOLDED_BYTES) -> list:
    """Replaces constant subgraphs by `Const` nodes (see the module docstring).

    Args:
        nodes: the step's runtime Nodes (rewired in place).
        protected: ids of fetched nodes: they stay (a fetched node that folds becomes a
            `Const` in place).
        limit: the largest folded value, in bytes.

    Returns:
        The new node list.
    """
    order = topological_order(nodes)
    has_control_flow = any(n.op in CONTROL_FLOW_OPS for n in nodes)
    values: dict = {}
    sources: dict = {}  # id(node) -> control inputs the folded value must keep
    for node in order:
        if node.op == "Const" and not node.inputs:
            value = _const_value(node)
            if value is not None:
                values[id(node)] = value
                sources[id(node)] = list(node.control_inputs)
            continue
        if node.op in _SHAPE_OPS:
            result = _evaluate_shape_op(node, limit)
            if result is not None:
                values[id(node)] = result
                # NOTE: the producer's edge keeps the value in its frame, iteration and
                # deadness; without control flow no edge is needed.
                producers = [src for src, _ in node.inputs] if has_control_flow else []
                sources[id(node)] = _merged_controls([node.control_inputs, producers])
                continue
        kernel_def = _foldable_kernel(node)
        if kernel_def is None or any(id(src) not in values for src, _ in node.inputs):
            continue
        result = _evaluate(node, kernel_def, values, limit)
        if result is None:
            continue
        values[id(node)] = result
        sources[id(node)] = _merged_controls(
            [sources[id(src)] for src, _ in node.inputs] + [node.control_inputs])
    consts = {id(n) for n in nodes if n.op == "Const"}
    folded = {key for key in values if key not in consts}
    if not folded:
        return list(nodes)
    consumers = node_edges.consumers(nodes)
    names = {n.name for n in nodes}
    const_def = get_op_def("Const")
    added = []
    for node in order:
        if id(node) not in folded:
            continue
        outside = [(c, k) for c, k in consumers.get(id(node), ()) if id(c) not in values]
        if id(node) in protected and len(node.output_dtypes) == 1:
            dtype = node.output_dtypes[0].base_dtype
            node.op, node.op_def = "Const", const_def
            node.attrs = _const_attrs(values[id(node)][0], dtype, node)
            node.inputs, node.input_dtypes = [], []
            node.control_inputs = list(sources[id(node)])
            continue
        if not outside:
            continue
        replacements: dict = {}

        def const_for(index, node=node, replacements=replacements):
            if index not in replacements:
                dtype = node.output_dtypes[index].base_dtype
                name = node_edges.unique_name(f"{node.name}/_folded_{index}", names)
                const = Node(name, "Const",
                             _const_attrs(values[id(node)][index], dtype, node), [],
                             list(sources[id(node)]), node.device, [dtype], [],
                             node.location, None, const_def)
                added.append(const)
                replacements[index] = const
            return replacements[index]

        for consumer, k in outside:
            if k >= 0:
                consumer.inputs[k] = (const_for(consumer.inputs[k][1]), 0)
            else:
                node_edges.replace_control(consumer, node, [const_for(0)])
    return _drop_unused(list(nodes) + added, protected, candidates=set(values))


def _drop_unused(nodes, protected: set, candidates: set) -> list:
    """Removes candidate nodes (stateless) that nothing consumes any more, transitively."""
    consumers = node_edges.consumers(nodes)
    removed: set = set()
    for node in reversed(topological_order(nodes)):
        if id(node) not in candidates or id(node) in protected:
            continue
        if all(id(c) in removed for c, _ in consumers.get(id(node), ())):
            removed.add(id(node))
    return [n for n in nodes if id(n) not in removed]


# -- arithmetic ------------------------------------------------------------------------------

def _is_one(node, dtype) -> bool:
    if node.op != "Const" or node.inputs:
        return False
    value = _const_value(node)
    if value is None or value[0].dtype != np.dtype(dtype.as_numpy_dtype):
        return False
    array = value[0]
    return array.size > 0 and bool(np.all(array == 1))


def _keeps_shape(node, position: int, one) -> bool:
    """Whether node's result has the shape of its input at `position`: the one is a scalar,
    or the static shapes of that input (as the client graph has it: a feed is checked
    against it) and of the result are fully known and equal."""
    if np.ndim(one.attrs["value"]) == 0:
        return True
    op = node.source_op
    if op is None or len(op._inputs) != len(node.inputs):
        return False
    out_shape = static_shape(node, 0)
    x_shape = op._inputs[position].shape
    if out_shape is None:
        return False
    return out_shape.is_fully_defined() and x_shape.is_fully_defined() and \
        out_shape.as_list() == x_shape.as_list()


_SAME_SHAPE_OPS = frozenset({"Reshape", "BroadcastTo"})


def _redundant_reshape(node) -> bool:
    """A Reshape/BroadcastTo to a constant shape that is its input's (static shapes of the
    client graph, both fully known)."""
    if node.op not in _SAME_SHAPE_OPS or len(node.inputs) != 2 or not is_pure(node):
        return False
    target = node.inputs[1][0]
    op = node.source_op
    if target.op != "Const" or target.inputs or op is None or len(op._inputs) != 2:
        return False
    out_shape = static_shape(node, 0)
    in_shape = op._inputs[0].shape
    return out_shape is not None and out_shape.is_fully_defined() and \
        in_shape.is_fully_defined() and out_shape.as_list() == in_shape.as_list()


def _to_identity(node, position: int, dropped) -> None:
    node.op, node.op_def = "Identity", get_op_def("Identity")
    node.attrs = {"T": node.input_dtypes[position].base_dtype,
                  **({"_class": node.attrs["_class"]} if node.attrs.get("_class") else {})}
    node.inputs = [node.inputs[position]]
    node.input_dtypes = [node.input_dtypes[position]]
    node.control_inputs = _merged_controls([node.control_inputs, dropped.control_inputs])


def simplify_arithmetic(nodes, protected: set) -> list:
    """Turns multiplications and divisions by one, and reshapes to the input's own shape, into
    Identities (see the module docstring).

    Returns:
        The node list: the same nodes, rewired in place, less the constants nothing reads any
        more.
    """
    dropped: set = set()
    for node in nodes:
        if _redundant_reshape(node):
            target = node.inputs[1][0]
            _to_identity(node, 0, target)
            dropped.add(id(target))
            continue
        positions = _TIMES_ONE.get(node.op)
        if positions is None or len(node.inputs) != 2 or not is_pure(node):
            continue
        dtype = node.attrs.get("T")
        if dtype not in _REAL_TYPES or (node.op == "RealDiv" and not dtype.is_floating):
            continue
        for k in positions:
            one = node.inputs[k][0]
            if _is_one(one, dtype) and _keeps_shape(node, 1 - k, one):
                _to_identity(node, 1 - k, one)
                dropped.add(id(one))
                break
    if not dropped:
        return list(nodes)
    return _drop_unused(nodes, protected, candidates=dropped)
