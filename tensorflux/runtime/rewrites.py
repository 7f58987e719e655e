"""Graph rewrites run on a step's runtime Nodes before placement.

`optimize(nodes, fetch_points, optimizer_options)` applies, in order:

1. **Constant folding** (runtime/constant_folding.py). A stateless node with a CPU kernel
   whose inputs are all constant is evaluated once, at plan time, if its result is at most
   `max_folded_constant_in_bytes` (10 MiB when 0); so are `Shape`/`ShapeN`/`Size`/`Rank` of
   tensors whose static shape is fully known (not fed, not read from a variable). The
   frontier of each folded subgraph is replaced by `Const` nodes that keep the control inputs
   of the subgraph (so a constant in an untaken branch stays dead). A kernel that fails is
   left alone: the step reports the error when it runs. An op may give its own plan-time
   kernel (`op_def.fold_kernel`, a stateless py_func's), used even when it has no inputs, as
   TF folds it. Multiplications (and divisions) of real numbers by a constant one that keep
   their input's shape, and reshapes to the input's own shape, then become Identities, as
   grappler's arithmetic optimizer does.
2. **Dead branches.** A `Switch` whose predicate is a `Const` (with no control inputs) is
   removed: its taken output is the data input, everything that is dead because of the
   untaken output is deleted, and `Merge`s lose their dead inputs (a Merge left with one
   input becomes that input, or an Identity of it when fetched). Skipped when a fetched node
   would be deleted.
3. **Identity chains.** An `Identity` is bypassed unless it is fetched, carries control
   inputs or a `_class`, reads or yields a reference, reads a control-flow op (the pivots of
   `cond` and `while_loop`), or names a device of its own (a deliberate copy point).
4. **Common subexpression elimination** (Click's global value numbering): in topological
   order, each node's value number is the hash of its op, attrs, requested device, the
   value numbers of its inputs (sorted for commutative ops) and of its control inputs; a
   node whose number is taken is replaced by the earlier node.
5. **Control-only results.** A stateless node whose outputs only feed control edges (the
   unused input gradient that `gate_gradients` groups, say) becomes a `NoOp` whose control
   inputs are its former inputs, as TF's dependency optimizer does: ordering is kept, the
   result is never computed.
6. **Fused products** (runtime/remapper.py). `Conv2D` or `MatMul` -> `BiasAdd`
   [-> `Relu`/`Relu6`] chains whose intermediate results nothing else reads (not fetched,
   no other consumer, same device) become one `_FusedConv2D` / `_FusedMatMul` node named
   after the chain's last node, as TF's remapper does: bias and activation run in place on
   the product, bit-identically. Before that, sums of products (`AddN` of `MatMul`s, or of
   `BiasAddGrad`s: a shared weight's gradient in an unrolled RNN) become one product over
   concatenated operands (`merge_product_sums`; values differ by summation order only), and
   a constant per-row `Mul` of the sparse softmax cross-entropy's backprop (the gradient of
   a mean loss) is taken inside the op (`fuse_xent_scale`, bit-identical). A sum of
   zero-padded pieces tiling one axis (the gradients of consecutive `Slice`s) becomes their
   concatenation plus zero (runtime/padded_sums.py, bit-identical). A `BasicLSTMCell`
   step's gate `Split` and its eleven elementwise nodes become one `_LSTMCellPointwise`
   node with their ten values as outputs (runtime/lstm_cells.py, bit-identical), and the
   input half of an unrolled RNN's gate products (`x_t @ K_x` for every step, forward and
   backward) becomes one tall product (runtime/lstm_inputs.py; summation order only). A
   moving average's `AssignSub(avg, Mul(Sub(avg, value), factor))` becomes one
   `_AssignMovingAverage` node (runtime/moving_averages.py, bit-identical).
7. **Pooled gradients** (runtime/remapper.py). `ReluGrad(MaxPoolGrad(a, p, g), a)` -- the
   backward pass of relu -> max_pool -- becomes `MaxPoolGrad(a, p, ReluGrad(g, p))`: the
   gradient reaches an input only where it is its window's maximum, so the relu mask there
   is the pooled output's, applied to the 4x smaller pooled gradient (bit-identical
   results). A `BiasAddGrad` of such a `MaxPoolGrad` (SAME or VALID) then sums the pooled
   gradient instead: routing moves each value to exactly one input, so the per-channel sums
   agree up to float rounding order. The three then become one `_FusedMaxPoolGrad` (float
   NHWC): the mask, the routing and the bias sum in one pass (input gradient bit-identical).
   An `ApplyGradientDescent` of a weight gradient `MatMul(a, b, transpose_a=True)` that
   nothing else reads becomes `_FusedMatMulApplyGradientDescent`: product and update per
   block of rows (bit-identical), the gradients' gate kept.
8. **Elementwise fusion** (runtime/elementwise_fusion.py), as TF1's XLA auto-clustering:
   trees of elementwise float ops whose interior results nothing else reads become one
   `_FusedElementwise` node running the tree as a program on a fixed interpreter.

Stateful ops (variables, queues, random ops, `_Send`/`_Recv`), feeds (`_Arg`), control-flow
ops and nodes touching references are never merged or folded; fetched nodes are never
removed (a fetched node that folds becomes a `Const` in place). The functions rewire the
given Nodes (the per-signature copies the session made) and return the new node list.

`OptimizerOptions` (as in TF, L1 = 0 is the default level): at L1 every rewrite runs. At L0
(opt_level = -1) only those explicitly asked for run: `do_constant_folding` enables 1 and 2,
`do_common_subexpression_elimination` enables 3, 4 and 5; 6 and 7 run at L1 only.
`GraphOptions.rewrite_options` (a `RewriterConfig`, grappler's switches) can then turn rules
off (never on): `constant_folding = OFF` turns off 1 and 2 (TF's two folding passes are one
here), `arithmetic_optimization = OFF` the Identities of 1,
`dependency_optimization = OFF` 3 and 5, `common_subgraph_elimination = OFF` 4,
`remapping = OFF` 6 and 7; `disable_meta_optimizer` turns off what grappler alone does here
(3, 5, 6, 7 and the Identities of 1) and keeps what `OptimizerOptions` asks for. Rule 8
follows `global_jit_level` at any level: ON_1 and ON_2 enable it; OFF and DEFAULT (as in TF1,
where auto-clustering is opt-in) leave today's kernels. NOTE: DEFAULT stays off: the training
steps of bench/training.py's models did not measurably change with it (they are BLAS- and
conv-bound), while compiling its interpreter costs a process's first step seconds on a cold
numba cache (LSTM 7.5 s on a shared 2-core machine). Chains of many small ops gain most: a
1000-add chain runs at ~0.04 us per op fused against ~1.2 unfused (bench/overhead.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.op_def import get_op_def
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.runtime import node_edges
from tensorflux.runtime.constant_folding import (
    DEFAULT_MAX_FOLDED_BYTES,
    fold_constants,
    simplify_arithmetic,
)
from tensorflux.runtime.constant_folding import is_pure as _is_pure
from tensorflux.runtime.constant_folding import touches_refs as _touches_refs
from tensorflux.runtime.elementwise_fusion import fuse_elementwise
from tensorflux.runtime.graph_ir import Node
from tensorflux.runtime.lstm_cells import fuse_lstm_pointwise
from tensorflux.runtime.lstm_inputs import hoist_input_products
from tensorflux.runtime.moving_averages import fuse_moving_averages
from tensorflux.runtime.padded_sums import merge_padded_sums
from tensorflux.runtime.partition import CONTROL_FLOW_OPS, MERGE_OPS, topological_order
from tensorflux.runtime.remapper import (
    fuse_gradient_updates,
    fuse_products,
    fuse_xent_scale,
    merge_product_sums,
    reorder_pool_gradients,
)

_COMMUTATIVE = frozenset({"Add", "AddV2", "Mul", "Maximum", "Minimum", "Equal", "NotEqual",
                          "LogicalAnd", "LogicalOr", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
                          "SquaredDifference"})


_OFF = 2  # RewriterConfig.Toggle.OFF


@dataclass(frozen=True)
class RewriteOptions:
    """Which rewrites run, derived from `OptimizerOptions` and `RewriterConfig`."""

    fold_constants: bool = True
    prune_dead_branches: bool = True
    remove_identities: bool = True
    common_subexpressions: bool = True
    max_folded_bytes: int = DEFAULT_MAX_FOLDED_BYTES
    control_only_to_noop: bool = True
    fuse_products: bool = True
    fuse_elementwise: bool = False
    simplify_arithmetic: bool = True

    @classmethod
    def from_proto(cls, options, rewrite_options=None) -> RewriteOptions:
        """The rewrites `options` (OptimizerOptions) and `rewrite_options` (RewriterConfig)
        leave on; either may be None (its defaults)."""
        result = cls()
        if options is not None:
            fuse_elementwise = int(options.global_jit_level) > 0
            level_one = options.opt_level >= 0
            fold = level_one or options.do_constant_folding
            cse = level_one or options.do_common_subexpression_elimination
            limit = int(options.max_folded_constant_in_bytes) or DEFAULT_MAX_FOLDED_BYTES
            result = cls(fold, fold, cse, cse, limit, control_only_to_noop=cse,
                         fuse_products=level_one, fuse_elementwise=fuse_elementwise,
                         simplify_arithmetic=fold)
        if rewrite_options is None:
            return result
        config = rewrite_options
        meta_off = bool(config.disable_meta_optimizer)
        folding = config.constant_folding != _OFF
        dependency = config.dependency_optimization != _OFF and not meta_off
        return replace(
            result,
            fold_constants=result.fold_constants and folding,
            prune_dead_branches=result.prune_dead_branches and folding,
            simplify_arithmetic=result.simplify_arithmetic and folding and not meta_off
            and config.arithmetic_optimization != _OFF,
            remove_identities=result.remove_identities and dependency,
            control_only_to_noop=result.control_only_to_noop and dependency,
            common_subexpressions=result.common_subexpressions
            and config.common_subgraph_elimination != _OFF,
            fuse_products=result.fuse_products and not meta_off and config.remapping != _OFF)


def optimize(nodes, fetch_points, optimizer_options=None, rewrite_options=None) -> list:
    """Runs the enabled rewrites (see the module docstring); returns the new node list.

    Args:
        nodes: the step's runtime Nodes.
        fetch_points: [(Node, output index)] the step fetches; those Nodes stay.
        optimizer_options: a `tf.OptimizerOptions` (None: everything at L1).
        rewrite_options: a `RewriterConfig` (GraphOptions.rewrite_options; None: defaults).

    Example:
        >>> print(graph_ir.dump(optimize(nodes, [(y, 0)], tf.OptimizerOptions())))
    """
    options = RewriteOptions.from_proto(optimizer_options, rewrite_options)
    protected = {id(node) for node, _ in fetch_points}
    nodes = list(nodes)
    if options.fold_constants:
        nodes = fold_constants(nodes, protected, options.max_folded_bytes)
    if options.simplify_arithmetic:
        nodes = simplify_arithmetic(nodes, protected)
    if options.prune_dead_branches:
        index_fetched = {id(node) for node, port in fetch_points
                         if node.op in MERGE_OPS and port == 1}
        nodes = prune_dead_branches(nodes, protected, index_fetched)
    if options.remove_identities:
        nodes = remove_identities(nodes, protected)
    if options.common_subexpressions:
        nodes = eliminate_common_subexpressions(nodes, protected)
    if options.fuse_products:
        nodes = merge_product_sums(nodes, protected)
        nodes = merge_padded_sums(nodes, protected)
        nodes = fuse_xent_scale(nodes, protected)
        nodes = fuse_products(nodes, protected)
        nodes = fuse_lstm_pointwise(nodes, protected)
        nodes = hoist_input_products(nodes, protected)
        nodes = reorder_pool_gradients(nodes, protected)
        nodes = fuse_gradient_updates(nodes, protected)
        nodes = fuse_moving_averages(nodes, protected)
    if options.fuse_elementwise:
        nodes = fuse_elementwise(nodes, protected)
    if options.control_only_to_noop and not any(n.op in CONTROL_FLOW_OPS for n in nodes):
        # NOTE: a NoOp would carry deadness differently inside conds and loops; skip them.
        nodes = control_only_to_noop(nodes, protected)
    return nodes


# -- dead branches -------------------------------------------------------------------------

def _constant_predicate(switch):
    if switch.op != "Switch" or len(switch.inputs) != 2 or _touches_refs(switch):
        return None
    pred, _ = switch.inputs[1]
    if pred.op != "Const" or pred.control_inputs or pred.inputs:
        return None
    value = np.asarray(pred.attrs.get("value"))
    if value.size != 1:
        return None
    return bool(value.reshape(-1)[0])


def _dead_set(switch, untaken: int, consumers) -> set:
    dead: set = set()
    dead_ports = {(id(switch), untaken)}
    work = [c for c, k in consumers.get(id(switch), ())
            if k >= 0 and c.inputs[k][1] == untaken]
    while work:
        node = work.pop()
        if id(node) in dead:
            continue
        data_dead = [id(src) in dead or (id(src), idx) in dead_ports
                     for src, idx in node.inputs]
        if node.op in MERGE_OPS:
            is_dead = bool(data_dead) and all(data_dead)
        else:
            is_dead = any(data_dead) or any(id(src) in dead for src in node.control_inputs)
        if is_dead:
            dead.add(id(node))
            work.extend(c for c, _ in consumers.get(id(node), ()))
    return dead


def prune_dead_branches(nodes, protected: set, index_fetched=frozenset()) -> list:
    """Removes Switches with constant predicates and their dead side (rule 2).

    `index_fetched` holds the Merges whose `value_index` output is fetched: a Switch whose
    removal would drop inputs of one of them stays (the index could not be kept)."""
    nodes = list(nodes)
    changed = True
    while changed:
        changed = False
        consumers = node_edges.consumers(nodes)
        for switch in topological_order(nodes):
            predicate = _constant_predicate(switch)
            if predicate is None or id(switch) in protected:
                continue
            taken, untaken = (1, 0) if predicate else (0, 1)
            dead = _dead_set(switch, untaken, consumers)
            if dead & protected:
                continue
            if _drops_merge_inputs(nodes, switch, untaken, dead, index_fetched):
                continue
            nodes = _remove_switch(nodes, switch, taken, dead, consumers, protected)
            changed = True
            break
    return nodes


def _drops_merge_inputs(nodes, switch, untaken, dead, merges) -> bool:
    for node in nodes:
        if id(node) in merges and any(id(src) in dead or (src is switch and idx == untaken)
                                      for src, idx in node.inputs):
            return True
    return False


def _remove_switch(nodes, switch, taken, dead, consumers, protected) -> list:
    data = switch.inputs[0]
    dead_ports = {(id(switch), 1 - taken)}
    extra = []
    names = {n.name for n in nodes}
    for consumer, k in consumers.get(id(switch), ()):
        if id(consumer) in dead:
            continue
        if k < 0:
            node_edges.replace_control(consumer, switch, [data[0]])
        elif consumer.inputs[k][1] == taken:
            consumer.inputs[k] = data
    for node in nodes:
        if id(node) in dead or node.op not in MERGE_OPS:
            continue
        keep = [(k, inp) for k, inp in enumerate(node.inputs)
                if id(inp[0]) not in dead and (id(inp[0]), inp[1]) not in dead_ports]
        if len(keep) == len(node.inputs):
            continue
        if len(keep) == 1 and not node.control_inputs:
            extra.extend(_bypass_merge(node, keep[0], consumers, names))
            if id(node) in protected:
                _merge_to_identity(node, keep[0][1])
            else:
                dead.add(id(node))
            continue
        node.inputs = [inp for _, inp in keep]
        node.input_dtypes = [src.output_dtypes[idx] for src, idx in node.inputs]
        node.attrs = dict(node.attrs, N=len(node.inputs))
    dead.add(id(switch))
    return [n for n in nodes if id(n) not in dead] + extra


def _merge_to_identity(merge, live) -> None:
    """A fetched Merge left with one input becomes an Identity of it, in place."""
    dtype = live[0].output_dtypes[live[1]]
    merge.op, merge.op_def = "Identity", get_op_def("Identity")
    merge.attrs = {"T": dtype.base_dtype}
    merge.inputs, merge.input_dtypes = [live], [dtype]
    merge.output_dtypes = [dtype]


def _bypass_merge(merge, kept, consumers, names) -> list:
    index, live = kept
    added = []
    index_const = None
    for consumer, k in consumers.get(id(merge), ()):
        if k < 0:
            node_edges.replace_control(consumer, merge, [live[0]])
        elif consumer.inputs[k][1] == 0:
            consumer.inputs[k] = live
        else:
            if index_const is None:
                index_name = node_edges.unique_name(f"{merge.name}/_value_index", names)
                index_const = Node(index_name, "Const",
                                   {"value": np.array(index, np.int32), "dtype": dtypes.int32},
                                   [], [live[0]], merge.device, [dtypes.int32], [],
                                   merge.location, None, get_op_def("Const"))
                added.append(index_const)
            consumer.inputs[k] = (index_const, 0)
    return added


# -- identities ----------------------------------------------------------------------------

def _removable_identity(node, protected) -> bool:
    if node.op != "Identity" or id(node) in protected or node.control_inputs:
        return False
    if node.attrs.get("_class") or _touches_refs(node) or len(node.inputs) != 1:
        return False
    src = node.inputs[0][0]
    if src.op in CONTROL_FLOW_OPS or src.op == "_Recv":
        return False
    return not node.device or node.device == src.device


def remove_identities(nodes, protected: set) -> list:
    """Bypasses Identity chains (rule 3)."""
    replaced: dict = {}
    for node in topological_order(nodes):
        node.inputs = [replaced.get(id(src), (src, idx)) for src, idx in node.inputs]
        if _removable_identity(node, protected):
            replaced[id(node)] = node.inputs[0]
    if not replaced:
        return list(nodes)
    for node in nodes:
        node.inputs = [replaced[id(src)] if id(src) in replaced else (src, idx)
                       for src, idx in node.inputs]
        if any(id(src) in replaced for src in node.control_inputs):
            controls = []
            for src in node.control_inputs:
                src = replaced[id(src)][0] if id(src) in replaced else src
                if src not in controls and src is not node:
                    controls.append(src)
            node.control_inputs = controls
    return [n for n in nodes if id(n) not in replaced]


# -- common subexpressions -----------------------------------------------------------------

def _freeze(value):
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        array = np.asarray(value)
        if array.dtype == np.object_:
            return ("nd", "O", array.shape, tuple(array.reshape(-1).tolist()))
        return ("nd", array.dtype.str, array.shape, array.tobytes())
    if isinstance(value, TensorShape):
        return ("shape", None if value.ndims is None else tuple(value.as_list()))
    if isinstance(value, dtypes.DType):
        return ("dtype", value.name)
    if isinstance(value, (list, tuple)):
        return ("seq",) + tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return ("map",) + tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    try:
        hash(value)
    except TypeError:
        return ("repr", repr(value))
    return (type(value).__name__, value)


def eliminate_common_subexpressions(nodes, protected: set) -> list:
    """Merges equivalent stateless nodes (rule 4)."""
    canonical: dict = {}
    replaced: dict = {}
    number: dict = {}
    for node in topological_order(nodes):
        node.inputs = [(replaced[id(src)], idx) if id(src) in replaced else (src, idx)
                       for src, idx in node.inputs]
        if any(id(src) in replaced for src in node.control_inputs):
            _dedupe_controls(node, replaced)
        number[id(node)] = len(number)
        if not _is_pure(node) or not node.output_dtypes:
            continue
        inputs = [(number.get(id(src), -1 - len(number)), idx) for src, idx in node.inputs]
        if node.op in _COMMUTATIVE:
            inputs.sort()
        controls = tuple(sorted(number.get(id(src), -1) for src in node.control_inputs))
        attrs = tuple(sorted((k, _freeze(v)) for k, v in node.attrs.items()))
        key = (node.op, attrs, node.device, tuple(inputs), controls)
        found = canonical.get(key)
        if found is None:
            canonical[key] = node
        elif id(node) not in protected:
            replaced[id(node)] = found
            number[id(node)] = number[id(found)]
    if not replaced:
        return list(nodes)
    for node in nodes:
        node.inputs = [(replaced[id(src)], idx) if id(src) in replaced else (src, idx)
                       for src, idx in node.inputs]
        if any(id(src) in replaced for src in node.control_inputs):
            _dedupe_controls(node, replaced)
    return [n for n in nodes if id(n) not in replaced]


def _dedupe_controls(node, replaced) -> None:
    controls = []
    for src in node.control_inputs:
        src = replaced.get(id(src), src)
        if src not in controls and src is not node:
            controls.append(src)
    node.control_inputs = controls


# -- control-only results -------------------------------------------------------------------

def control_only_to_noop(nodes, protected: set) -> list:
    """Turns stateless nodes whose results only feed control edges into NoOps (rule 5).

    Readers come first (reverse topological order): a node read only by nodes that became
    NoOps here (their data inputs now control inputs) becomes a NoOp too."""
    consumers = node_edges.consumers(nodes)
    noop = None
    converted: set = set()
    for node in reversed(nodes):
        users = consumers.get(id(node), ())
        if not users or id(node) in protected or not node.output_dtypes or \
                not _is_pure(node) or \
                any(k >= 0 and id(user) not in converted for user, k in users):
            continue
        converted.add(id(node))
        noop = noop or get_op_def("NoOp")
        controls = list(node.control_inputs)
        for src, _ in node.inputs:
            if src not in controls:
                controls.append(src)
        node.op, node.op_def = "NoOp", noop
        node.attrs = {k: v for k, v in node.attrs.items() if k == "_class"}
        node.inputs, node.input_dtypes, node.output_dtypes = [], [], []
        node.control_inputs = controls
    return list(nodes)


__all__ = ["optimize", "RewriteOptions", "fold_constants", "prune_dead_branches",
           "remove_identities", "eliminate_common_subexpressions", "control_only_to_noop",
           "fuse_products", "reorder_pool_gradients", "fuse_elementwise"]
