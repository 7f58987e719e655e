"""TF's remapper rewrites on a step's runtime Nodes (rules 6 and 7 of runtime/rewrites.py).

- `fuse_products`: `Conv2D`/`MatMul` -> `BiasAdd` [-> `Relu`/`Relu6`] chains whose intermediate
  results nothing else reads become one `_FusedConv2D` / `_FusedMatMul` node.
- `reorder_pool_gradients`: `ReluGrad(MaxPoolGrad(a, p, g), a)` becomes
  `MaxPoolGrad(a, p, ReluGrad(g, p))`, and a `BiasAddGrad` of it sums the pooled gradient;
  then (float types, NHWC) the three become one `_FusedMaxPoolGrad(a, p, g)` whose outputs
  are the input gradient and the bias gradient: one pass instead of three over the pooled
  gradient (the relu mask, the routing, the bias sum; `fuse_pool_gradients` switches it).
- `fuse_gradient_updates`: `ApplyGradientDescent(var, alpha, MatMul(a, b, transpose_a=True))`
  (a dense layer's weight gradient, directly or through tf.gradients' gate `Identity`) whose
  product nothing else reads becomes `_FusedMatMulApplyGradientDescent(var, alpha, a, b)`:
  the product is made and applied per cache-sized block of rows (bit-identical), so the
  gradient never goes to memory whole. The gate's waits are kept: nodes that waited for the
  product wait for its inputs, and the update still waits for what the Identity waited for
  (the other gradients of the layer, which read the variable's old value). Not with the
  inter-op overlap on (`overlap.enabled()`): it pairs the weight gradient's product with the
  input gradient's, which the fused update has to wait for.
- `merge_product_sums`: `AddN(MatMul(a_1, b_1), ..., MatMul(a_n, b_n))` (the gradient of a
  weight shared across the steps of an unrolled RNN: TF sums one product per step) becomes one
  `MatMul(ConcatV2(a_i), ConcatV2(b_i))` over the concatenated contraction dimension, and
  `AddN(BiasAddGrad(g_1), ...)` one `BiasAddGrad(ConcatV2(g_i))`. One product with a long inner
  dimension instead of n short ones plus n-1 passes over the sum: 20 LSTM steps' kernel
  gradient [512, 1024] takes 5.6 ms of CPU instead of 19.4. Values differ from the unmerged
  graph only by summation order (float rounding).
- `fuse_xent_scale`: `Mul(c, SparseSoftmaxCrossEntropyWithLogits:1)` with a constant `c` of
  one value per row (the loss gradient of a mean, constant-folded) becomes
  `_SparseSoftmaxCrossEntropyWithLogitsScaled(features, labels, c)`: the backprop rows are
  scaled while in cache instead of in another pass over `[batch, classes]` (bit-identical).
  Then a `BiasAddGrad` of that backprop (the output layer's bias gradient) is folded in too:
  `_SparseSoftmaxCrossEntropyWithLogitsScaledBiasGrad`, whose third output is the column sums
  taken per block of rows in cache (summation order only; `FOLD_XENT_BIAS_GRAD` switches it).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.op_def import OP_DEFS, get_op_def
from tensorflux.runtime import node_edges, overlap

__all__ = ["fuse_products", "reorder_pool_gradients", "merge_product_sums", "fuse_xent_scale",
           "fuse_gradient_updates"]

# `reorder_pool_gradients` also merges the reordered chain into `_FusedMaxPoolGrad` (a switch
# for the A/B benchmarks and the tests: the unmerged chain gives the very input gradient).
FUSE_POOL_GRADIENTS = True
# `fuse_gradient_updates` runs (a switch for the A/B benchmarks and the tests).
FUSE_GRADIENT_UPDATES = True


# -- fused products -------------------------------------------------------------------------

_FUSED_PRODUCTS = {"Conv2D": "_FusedConv2D", "MatMul": "_FusedMatMul"}
_FUSED_ACTIVATIONS = frozenset({"Relu", "Relu6"})
_FUSED_TYPES = frozenset({dtypes.float32, dtypes.float64})


def _sole_reader(node, consumers, protected, op_types):
    """The one node reading `node`'s output 0 as its first input, if that is all that uses
    `node` and its op is in `op_types`; else None."""
    users = consumers.get(id(node), ())
    if len(users) != 1 or id(node) in protected or node.attrs.get("_class"):
        return None
    reader, k = users[0]
    if k != 0 or reader.op not in op_types or reader.device != node.device or \
            reader.attrs.get("T") != node.attrs.get("T"):
        return None
    return reader


def fuse_products(nodes, protected: set) -> list:
    """Turns product -> BiasAdd [-> activation] chains into fused nodes (rule 6)."""
    consumers = node_edges.consumers(nodes)
    removed: set = set()
    for node in nodes:
        fused = _FUSED_PRODUCTS.get(node.op)
        if fused is None or fused not in OP_DEFS or node.attrs.get("T") not in _FUSED_TYPES:
            continue
        bias_add = _sole_reader(node, consumers, protected, ("BiasAdd",))
        if bias_add is None or (node.op == "Conv2D" and bias_add.attrs.get("data_format") !=
                                node.attrs.get("data_format")):
            continue
        activation = _sole_reader(bias_add, consumers, protected, _FUSED_ACTIVATIONS)
        last = activation or bias_add
        chain = [node, bias_add] + ([activation] if activation else [])
        controls = []
        for member in chain:
            for src in member.control_inputs:
                if src not in controls:
                    controls.append(src)
        attrs = {k: v for k, v in node.attrs.items() if k != "_class"}
        attrs.update(num_args=1, fused_ops=[n.op for n in chain[1:]], epsilon=0.0001)
        if last.attrs.get("_class"):
            attrs["_class"] = last.attrs["_class"]
        last.op, last.op_def, last.attrs = fused, get_op_def(fused), attrs
        last.inputs = list(node.inputs) + [bias_add.inputs[1]]
        last.input_dtypes = list(node.input_dtypes) + [bias_add.input_dtypes[1]]
        last.control_inputs = controls
        removed.update(id(member) for member in chain if member is not last)
    if not removed:
        return list(nodes)
    return [n for n in nodes if id(n) not in removed]


def _reader_of(node, consumers, protected):
    """The one (node, position) reading `node` (data edges only), unless `node` is fetched
    or also feeds a control edge; else None."""
    users = consumers.get(id(node), ())
    if len(users) != 1 or id(node) in protected or users[0][1] < 0:
        return None
    return users[0]


def reorder_pool_gradients(nodes, protected: set) -> list:
    """Moves relu gradients below max-pool gradients, and bias gradients onto the pooled
    gradient (rule 7)."""
    consumers = node_edges.consumers(nodes)
    names = {n.name for n in nodes}
    removed: set = set()
    added: dict = {}  # id(MaxPoolGrad) -> the new pooled ReluGrad placed before it
    for relu_grad in nodes:
        if relu_grad.op != "ReluGrad" or id(relu_grad) in protected:
            continue
        pool_grad, features = relu_grad.inputs
        pool_grad = pool_grad[0] if pool_grad[1] == 0 else None
        if pool_grad is None or pool_grad.op != "MaxPoolGrad" or \
                pool_grad.inputs[0] != features or pool_grad.device != relu_grad.device or \
                _reader_of(pool_grad, consumers, protected) != (relu_grad, 0) or \
                relu_grad.control_inputs or relu_grad.attrs.get("_class"):
            continue
        pooled = type(relu_grad)(
            node_edges.unique_name(relu_grad.name + "/pooled", names), "ReluGrad",
            {"T": relu_grad.attrs["T"]}, [pool_grad.inputs[2], pool_grad.inputs[1]], [],
            device=relu_grad.device, output_dtypes=list(relu_grad.output_dtypes),
            input_dtypes=[pool_grad.input_dtypes[2], pool_grad.input_dtypes[1]],
            location=relu_grad.location, source_op=relu_grad.source_op,
            op_def=relu_grad.op_def)
        pool_grad.inputs = [pool_grad.inputs[0], pool_grad.inputs[1], (pooled, 0)]
        for reader, k in consumers.get(id(relu_grad), ()):
            if k >= 0:
                reader.inputs[k] = (pool_grad, 0)
            else:
                node_edges.replace_control(reader, relu_grad, [pool_grad])
        consumers[id(pool_grad)] = consumers.get(id(relu_grad), [])
        removed.add(id(relu_grad))
        added[id(pool_grad)] = pooled
    for bias_grad in nodes:
        if bias_grad.op != "BiasAddGrad" or id(bias_grad) in removed:
            continue
        src, index = bias_grad.inputs[0]
        pooled = added.get(id(src))
        if pooled is None or index != 0 or src.attrs.get("padding") not in ("SAME", "VALID") \
                or bias_grad.attrs.get("data_format") != src.attrs.get("data_format"):
            continue
        bias_grad.inputs = [(pooled, 0)]
    if not added:
        return list(nodes)
    if FUSE_POOL_GRADIENTS:
        _fuse_pool_gradients(nodes, added, removed, protected)
    out = []
    for node in nodes:
        if id(node) in added and id(added[id(node)]) not in removed:
            out.append(added[id(node)])
        if id(node) not in removed:
            out.append(node)
    return out


_FUSED_POOL_GRAD = "_FusedMaxPoolGrad"


def _fuse_pool_gradients(nodes, added: dict, removed: set, protected: set) -> None:
    """`MaxPoolGrad(a, p, r)` [+ `BiasAddGrad(r)`] with `r = ReluGrad(g, p)` read by nothing
    else becomes `_FusedMaxPoolGrad(a, p, g)` (NHWC floats): output 0 is the input gradient,
    output 1 the bias gradient, which the BiasAddGrad's readers now read."""
    if _FUSED_POOL_GRAD not in OP_DEFS:
        return
    consumers = node_edges.consumers(nodes + list(added.values()))
    for pool_grad in nodes:
        pooled = added.get(id(pool_grad))
        if pooled is None or pool_grad.attrs.get("T") not in _FUSED_TYPES or \
                pool_grad.attrs.get("data_format", "NHWC") != "NHWC":
            continue
        readers = consumers.get(id(pooled), [])
        bias_grads = [reader for reader, _ in readers if reader is not pool_grad]
        if [k for reader, k in readers if reader is pool_grad] != [2] or \
                len(bias_grads) > 1 or len(readers) != 1 + len(bias_grads):
            continue
        bias_grad = bias_grads[0] if bias_grads else None
        if bias_grad is not None and (
                bias_grad.op != "BiasAddGrad" or id(bias_grad) in protected or
                bias_grad.control_inputs or bias_grad.attrs.get("_class") or
                bias_grad.device != pool_grad.device or
                bias_grad.attrs.get("data_format", "NHWC") != "NHWC"):
            continue
        dtype = pool_grad.attrs["T"]
        attrs = {k: v for k, v in pool_grad.attrs.items() if k != "_class"}
        if pool_grad.attrs.get("_class"):
            attrs["_class"] = pool_grad.attrs["_class"]
        pool_grad.op, pool_grad.op_def = _FUSED_POOL_GRAD, get_op_def(_FUSED_POOL_GRAD)
        pool_grad.attrs = attrs
        pool_grad.inputs = [pool_grad.inputs[0], pool_grad.inputs[1], pooled.inputs[0]]
        pool_grad.input_dtypes = [pool_grad.input_dtypes[0], pool_grad.input_dtypes[1],
                                  pooled.input_dtypes[0]]
        pool_grad.output_dtypes = [dtype, dtype]
        removed.add(id(pooled))
        if bias_grad is None:
            continue
        for reader, k in consumers.get(id(bias_grad), ()):
            if k >= 0:
                reader.inputs[k] = (pool_grad, 1)
            else:
                node_edges.replace_control(reader, bias_grad, [pool_grad])
        removed.add(id(bias_grad))


# -- weight gradients applied by gradient descent --------------------------------------------

_FUSED_UPDATE = "_FusedMatMulApplyGradientDescent"


def _gradient_product(apply, consumers, protected):
    """(MatMul, gate Identity or None) whose value only `apply` reads, as its delta."""
    src, port = apply.inputs[2]
    gate = None
    if src.op == "Identity":
        if port != 0 or id(src) in protected or src.attrs.get("_class") or \
                consumers.get(id(src), ()) != [(apply, 2)]:
            return None
        gate, (src, port) = src, src.inputs[0]
    reader = gate or apply
    if src.op != "MatMul" or port != 0 or id(src) in protected or src.attrs.get("_class") or \
            not src.attrs.get("transpose_a") or src.attrs.get("transpose_b") or \
            src.device != apply.device or src.attrs.get("T") != apply.attrs.get("T") or \
            any(dtype.is_ref_dtype for dtype in src.input_dtypes) or \
            _data_readers(src, consumers) != [(reader, 0 if gate else 2)]:
        return None
    return src, gate


def fuse_gradient_updates(nodes, protected: set) -> list:
    """Applies weight-gradient products by gradient descent block by block (see the module
    docstring); the update keeps its name, so its readers are unchanged."""
    if not FUSE_GRADIENT_UPDATES or _FUSED_UPDATE not in OP_DEFS or overlap.enabled():
        return list(nodes)
    consumers = node_edges.consumers(nodes)
    removed: set = set()
    for apply in nodes:
        if apply.op != "ApplyGradientDescent" or apply.attrs.get("T") not in _FUSED_TYPES:
            continue
        found = _gradient_product(apply, consumers, protected)
        if found is None:
            continue
        product, gate = found
        members = [product] + ([gate] if gate is not None else [])
        if any(id(m) in removed for m in members):
            continue
        controls = []
        for src in apply.control_inputs + (gate.control_inputs if gate else []) + \
                product.control_inputs:
            if src not in controls and src not in members:
                controls.append(src)
        waits = [src for src, _ in product.inputs] + product.control_inputs
        for member in members:
            for reader, k in consumers.get(id(member), ()):
                if k < 0:
                    node_edges.replace_control(reader, member, waits)
        attrs = {"T": apply.attrs["T"], "use_locking": bool(apply.attrs.get("use_locking")),
                 "transpose_a": True, "transpose_b": False}
        if apply.attrs.get("_class"):
            attrs["_class"] = apply.attrs["_class"]
        apply.op, apply.op_def, apply.attrs = _FUSED_UPDATE, get_op_def(_FUSED_UPDATE), attrs
        apply.inputs = list(apply.inputs[:2]) + list(product.inputs)
        apply.input_dtypes = list(apply.input_dtypes[:2]) + list(product.input_dtypes)
        apply.control_inputs = controls
        removed.update(id(m) for m in members)
    if not removed:
        return list(nodes)
    return [n for n in nodes if id(n) not in removed]


# -- sums of products -----------------------------------------------------------------------

_MERGED_TYPES = frozenset({dtypes.float32, dtypes.float64})


def _data_readers(node, consumers):
    return [(reader, k) for reader, k in consumers.get(id(node), ()) if k >= 0]


def _summand(src, add_n, position, consumers, protected):
    """(product node, nodes to remove, control inputs to keep) for AddN input `src`: a MatMul
    or BiasAddGrad, directly or through an Identity (tf.gradients' `tuple`), whose value
    nothing but the sum reads; else None."""
    removed, controls = [], []
    if src.op == "Identity":
        if id(src) in protected or src.attrs.get("_class") or src.inputs[0][1] != 0 or \
                consumers.get(id(src), ()) != [(add_n, position)]:
            return None
        removed.append(src)
        controls.extend(src.control_inputs)
        reader, position, src = src, 0, src.inputs[0][0]
    else:
        reader = add_n
    if src.op not in ("MatMul", "BiasAddGrad") or id(src) in protected or \
            src.attrs.get("_class") or src.device != add_n.device or \
            src.attrs.get("T") != add_n.attrs.get("T") or \
            any(dtype.is_ref_dtype for dtype in src.input_dtypes) or \
            _data_readers(src, consumers) != [(reader, position)]:
        return None
    removed.append(src)
    controls.extend(src.control_inputs)
    return src, removed, controls


def _summands(add_n, consumers, protected):
    """The products summed by `add_n` (all MatMuls with one pair of transpose flags, or all
    NHWC BiasAddGrads), the nodes the merge removes and the control inputs it keeps; None
    when the sum is not of that form."""
    if len(add_n.inputs) < 2 or any(idx != 0 for _, idx in add_n.inputs) or \
            len({id(src) for src, _ in add_n.inputs}) != len(add_n.inputs):
        return None
    products, removed, controls = [], [], []
    for position, (src, _) in enumerate(add_n.inputs):
        found = _summand(src, add_n, position, consumers, protected)
        if found is None:
            return None
        products.append(found[0])
        removed.extend(found[1])
        controls.extend(c for c in found[2] if c not in controls)
    first = products[0]
    keys = ("transpose_a", "transpose_b") if first.op == "MatMul" else ("data_format",)
    if first.op == "BiasAddGrad" and first.attrs.get("data_format", "NHWC") != "NHWC":
        return None
    if any(p.op != first.op or any(p.attrs.get(k) != first.attrs.get(k) for k in keys)
           for p in products):
        return None
    return products, removed, controls


class _Concats:
    """`ConcatV2` nodes made by `merge_product_sums`, one per (inputs, axis), shared."""

    def __init__(self, nodes):
        self.names = {n.name for n in nodes}
        self.made: dict = {}
        self.added: list = []

    def of(self, inputs, axis: int, like):
        key = (tuple((id(src), idx) for src, idx in inputs), axis)
        if key not in self.made:
            dtype = like.attrs["T"]
            axis_node = type(like)(
                node_edges.unique_name(like.name + "/_merged_axis", self.names), "Const",
                {"value": np.array(axis, np.int32), "dtype": dtypes.int32}, [], [],
                device=like.device, output_dtypes=[dtypes.int32], location=like.location,
                op_def=get_op_def("Const"))
            concat = type(like)(
                node_edges.unique_name(like.name + "/_merged_concat", self.names), "ConcatV2",
                {"N": len(inputs), "T": dtype, "Tidx": dtypes.int32},
                list(inputs) + [(axis_node, 0)], [], device=like.device,
                output_dtypes=[dtype], input_dtypes=[dtype] * len(inputs) + [dtypes.int32],
                location=like.location, op_def=get_op_def("ConcatV2"))
            self.added.append((like, [axis_node, concat]))
            self.made[key] = concat
        return (self.made[key], 0)


def merge_product_sums(nodes, protected: set) -> list:
    """Turns sums of products into one product over concatenated operands (see the module
    docstring); the AddN keeps its name, so its readers are unchanged."""
    consumers = node_edges.consumers(nodes)
    concats = _Concats(nodes)
    removed: set = set()
    for add_n in nodes:
        # NOTE: a fetched AddN may merge: it keeps its name and output.
        if add_n.op != "AddN" or add_n.attrs.get("T") not in _MERGED_TYPES:
            continue
        found = _summands(add_n, consumers, protected)
        if found is None:
            continue
        sources, dropped, controls = found
        first = sources[0]
        if first.op == "MatMul":
            ta, tb = bool(first.attrs.get("transpose_a")), bool(first.attrs.get("transpose_b"))
            # sum_i a_i b_i = [a_1 .. a_n] [b_1; ..; b_n]: a's contraction axis is 0 when
            # transposed, b's is 1 when transposed.
            a = concats.of([s.inputs[0] for s in sources], 0 if ta else 1, add_n)
            b = concats.of([s.inputs[1] for s in sources], 1 if tb else 0, add_n)
            inputs, input_dtypes = [a, b], list(first.input_dtypes)
            attrs = {"T": add_n.attrs["T"], "transpose_a": ta, "transpose_b": tb}
        else:
            inputs = [concats.of([s.inputs[0] for s in sources], 0, add_n)]
            input_dtypes = list(first.input_dtypes)
            attrs = {"T": add_n.attrs["T"], "data_format": "NHWC"}
        if add_n.attrs.get("_class"):
            attrs["_class"] = add_n.attrs["_class"]
        add_n.op, add_n.op_def, add_n.attrs = first.op, get_op_def(first.op), attrs
        add_n.inputs, add_n.input_dtypes = inputs, input_dtypes
        gone = {id(n) for n in dropped}
        add_n.control_inputs = [c for c in dict.fromkeys(add_n.control_inputs + controls)
                                if id(c) not in gone]
        for product in sources:
            # Nodes waiting for a product (tf.gradients' group_deps) wait for its inputs.
            waits = [src for src, _ in product.inputs] + product.control_inputs
            for reader, k in consumers.get(id(product), ()):
                if k < 0:
                    node_edges.replace_control(reader, product, waits)
        removed.update(gone)
    if not concats.added:
        return list(nodes)
    before = {}
    for like, made in concats.added:
        before.setdefault(id(like), []).extend(made)
    out = []
    for node in nodes:
        out.extend(before.get(id(node), ()))
        if id(node) not in removed:
            out.append(node)
    return out


# -- scaled cross-entropy gradients ---------------------------------------------------------

_XENT = "SparseSoftmaxCrossEntropyWithLogits"
_SCALED_XENT = "_SparseSoftmaxCrossEntropyWithLogitsScaled"
_XENT_BIAS_GRAD = "_SparseSoftmaxCrossEntropyWithLogitsScaledBiasGrad"
# `fuse_xent_scale` folds the backprop's BiasAddGrad in too (a switch for the A/B benchmarks).
FOLD_XENT_BIAS_GRAD = True


def _row_scale(node, dtype):
    """True when `node` is a Const of `dtype` with one value per row: shape [], [1] or [k, 1]."""
    # NOTE: no control inputs either: a folded Const may wait for nodes after the op.
    if node.op != "Const" or node.inputs or node.control_inputs or \
            node.attrs.get("dtype") != dtype:
        return False
    shape = np.shape(node.attrs.get("value"))
    return len(shape) == 0 or (len(shape) <= 2 and shape[-1] == 1)


def _scalable(xent, mul, consumers, protected) -> bool:
    """True when `xent` is a cross-entropy whose backprop only `mul` reads."""
    if xent.op != _XENT or id(xent) in protected or xent.attrs.get("_class") or \
            xent.attrs.get("T") not in _FUSED_TYPES or xent.attrs.get("T") != \
            mul.attrs.get("T") or xent.device != mul.device:
        return False
    readers = [reader for reader, k in consumers.get(id(xent), ())
               if k >= 0 and reader.inputs[k][1] == 1]
    return readers == [mul]


def fuse_xent_scale(nodes, protected: set) -> list:
    """Folds a constant per-row `Mul` of the cross-entropy's backprop into the op (see the
    module docstring); the Mul's readers read the fused op's backprop."""
    if _SCALED_XENT not in OP_DEFS:
        return list(nodes)
    consumers = node_edges.consumers(nodes)
    removed: set = set()
    for mul in nodes:
        if mul.op != "Mul" or id(mul) in protected or mul.control_inputs:
            continue
        found = [(xent, scale) for (xent, port), (scale, _) in zip(mul.inputs, mul.inputs[::-1])
                 if port == 1 and _scalable(xent, mul, consumers, protected) and
                 _row_scale(scale, xent.attrs["T"])]
        if not found:
            continue
        xent, scale = found[0]
        xent.op, xent.op_def = _SCALED_XENT, get_op_def(_SCALED_XENT)
        xent.inputs = list(xent.inputs) + [(scale, 0)]
        xent.input_dtypes = list(xent.input_dtypes) + [xent.attrs["T"]]
        for reader, position in consumers.get(id(mul), ()):
            if position >= 0:
                reader.inputs[position] = (xent, 1)
            else:
                node_edges.replace_control(reader, mul, [xent])
        removed.add(id(mul))
    if not removed:
        return list(nodes)
    nodes = [n for n in nodes if id(n) not in removed]
    return fold_xent_bias_grad(nodes, protected) if FOLD_XENT_BIAS_GRAD else nodes


def fold_xent_bias_grad(nodes, protected: set) -> list:
    """A `BiasAddGrad` of a scaled cross-entropy's backprop (directly or through Identities)
    becomes the third output of the cross-entropy, now
    `_SparseSoftmaxCrossEntropyWithLogitsScaledBiasGrad`; its readers read that output (a
    fetched BiasAddGrad becomes an Identity of it)."""
    if _XENT_BIAS_GRAD not in OP_DEFS:
        return nodes
    consumers = node_edges.consumers(nodes)
    removed: set = set()
    for grad in nodes:
        if grad.op != "BiasAddGrad" or grad.control_inputs or len(grad.inputs) != 1 or \
                grad.attrs.get("_class"):
            continue
        xent, port = grad.inputs[0]
        while xent.op == "Identity" and len(xent.inputs) == 1 and port == 0:
            xent, port = xent.inputs[0]
        if xent.op != _SCALED_XENT or port != 1 or id(xent) in protected or \
                xent.device != grad.device or grad.attrs.get("T") != xent.attrs.get("T"):
            continue  # (the backprop is 2-D: its bias axis is 1 in either data format)
        xent.op, xent.op_def = _XENT_BIAS_GRAD, get_op_def(_XENT_BIAS_GRAD)
        xent.output_dtypes = list(xent.output_dtypes) + [xent.attrs["T"]]
        if id(grad) in protected:  # a fetched gradient keeps its node: an Identity of it
            grad.op, grad.op_def = "Identity", get_op_def("Identity")
            grad.attrs, grad.inputs = {"T": xent.attrs["T"]}, [(xent, 2)]
            continue
        for reader, position in consumers.get(id(grad), ()):
            if position >= 0:
                reader.inputs[position] = (xent, 2)
            else:
                node_edges.replace_control(reader, grad, [xent])
        removed.add(id(grad))
    return [n for n in nodes if id(n) not in removed] if removed else nodes
