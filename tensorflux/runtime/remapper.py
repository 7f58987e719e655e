"""TF's remapper rewrites on a step's runtime Nodes (rules 6 and 7 of runtime/rewrites.py).

- `fuse_products`: `Conv2D`/`MatMul` -> `BiasAdd` [-> `Relu`/`Relu6`] chains whose intermediate
  results nothing else reads become one `_FusedConv2D` / `_FusedMatMul` node.
- `reorder_pool_gradients`: `ReluGrad(MaxPoolGrad(a, p, g), a)` becomes
  `MaxPoolGrad(a, p, ReluGrad(g, p))`, and a `BiasAddGrad` of it sums the pooled gradient.
"""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework.op_def import OP_DEFS, get_op_def
from tensorflux.runtime import node_edges

__all__ = ["fuse_products", "reorder_pool_gradients"]


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
    out = []
    for node in nodes:
        if id(node) in added:
            out.append(added[id(node)])
        if id(node) not in removed:
            out.append(node)
    return out
