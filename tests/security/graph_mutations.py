"""Mutations of real GraphDefs for the fuzz tests: each draws its choices from Hypothesis's
`data` so that a failure shrinks to a small mutation list."""

import os

import numpy as np
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.protos import attr_value_pb2, graph_pb2, tensor_pb2

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "while_cond_graph.pb")
HUGE = [2**31, 2**40, 2**62, 2**63 - 1, -1, -7, 0, 3]
OPS = ["Const", "Add", "Placeholder", "Merge", "Switch", "NextIteration", "Enter", "_Arg",
       "VariableV2", "AddN", "ConcatV2", "Identity", "NoSuchOp", "", "Pack", "Exit"]


def fixture_graph():
    with open(FIXTURE, "rb") as f:
        return graph_pb2.GraphDef.FromString(f.read())


def model_graph():
    """A small TF1 model: variables (with colocated ops), strings, list attrs, AddN, Concat."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(np.ones((3, 2), np.float32), name="w")
        y = tf.matmul(x, w)
        z = tf.add_n([y, y, y])
        tf.concat([z, y], axis=1, name="cat")
        tf.constant(["a", "bc"], name="s")
        tf.reshape(z, [-1], name="flat")
        with graph.colocate_with(w.op):
            tf.identity(w, name="w_read")
    return graph.as_graph_def(add_shapes=True)


BASES = [fixture_graph(), model_graph()]


def _random_attr(data):
    proto = attr_value_pb2.AttrValue()
    kind = data.draw(st.sampled_from(
        ["i", "f", "s", "b", "type", "shape", "tensor", "list_i", "list_s", "list_type",
         "placeholder", "empty", "list_mixed", "class_ints"]))
    if kind == "i":
        proto.i = data.draw(st.sampled_from(HUGE))
    elif kind == "f":
        proto.f = 1.5
    elif kind == "s":
        proto.s = data.draw(st.sampled_from([b"x", b"\xff\xfe", b"loc:@nowhere", b"import"]))
    elif kind == "b":
        proto.b = True
    elif kind == "type":
        proto.type = data.draw(st.sampled_from([0, 1, 3, 7, 20, 21, 99, 117]))
    elif kind == "shape":
        for size in data.draw(st.lists(st.sampled_from(HUGE), max_size=3)):
            proto.shape.dim.add(size=size)
    elif kind == "tensor":
        proto.tensor.CopyFrom(_random_tensor(data))
    elif kind == "list_i":
        proto.list.i.extend(data.draw(st.lists(st.sampled_from(HUGE), max_size=4)))
    elif kind == "list_s":
        proto.list.s.extend([b"loc:@x", b"\xff"])
    elif kind == "list_type":
        proto.list.type.extend([1, 99])
    elif kind == "placeholder":
        proto.placeholder = "T"
    elif kind == "list_mixed":
        proto.list.i.append(1)
        proto.list.s.append(b"a")
    elif kind == "class_ints":
        proto.list.i.extend([1, 2])
    return proto


def _random_tensor(data):
    tensor = tensor_pb2.TensorProto()
    tensor.dtype = data.draw(st.sampled_from([1, 2, 3, 6, 7, 9, 10, 14, 18, 19, 20, 0, 999]))
    for size in data.draw(st.lists(st.sampled_from(HUGE), max_size=3)):
        tensor.tensor_shape.dim.add(size=size)
    fill = data.draw(st.sampled_from(["float", "int", "string", "content", "none", "many"]))
    if fill == "float":
        tensor.float_val.append(1.0)
    elif fill == "int":
        tensor.int_val.extend([1, 2, 3])
    elif fill == "string":
        tensor.string_val.append(b"abc")
    elif fill == "content":
        tensor.tensor_content = b"\x00" * data.draw(st.sampled_from([1, 3, 4, 8, 13]))
    elif fill == "many":
        tensor.float_val.extend([0.5] * 40)
    return tensor


def _pick(data, graph_def):
    return graph_def.node[data.draw(st.integers(0, len(graph_def.node) - 1))]


def _bad_input(data, graph_def):
    names = [n.name for n in graph_def.node]
    name = data.draw(st.sampled_from(names + ["missing", ""]))
    suffix = data.draw(st.sampled_from(["", ":0", ":1", ":7", ":-1", ":99999999999999999999",
                                        ":x", "^"]))
    return "^" + name if suffix == "^" else name + suffix


def mutate(data, graph_def):
    """A copy of `graph_def` with 1-4 random mutations."""
    out = graph_pb2.GraphDef()
    out.CopyFrom(graph_def)
    for _ in range(data.draw(st.integers(1, 4))):
        if not out.node:
            break
        what = data.draw(st.sampled_from([
            "drop_node", "dup_node", "op", "attr_kind", "drop_attr", "tensor", "shape_dims",
            "input_bad", "drop_input", "dup_input", "cycle", "class", "number_attr",
            "device", "name", "bytes"]))
        node = _pick(data, out)
        if what == "drop_node":
            out.node.remove(node)
        elif what == "dup_node":
            out.node.add().CopyFrom(node)
        elif what == "op":
            node.op = data.draw(st.sampled_from(OPS))
        elif what == "attr_kind":
            keys = sorted(node.attr) or ["T"]
            node.attr[data.draw(st.sampled_from(keys + ["_class", "N", "_output_shapes"]))] \
                .CopyFrom(_random_attr(data))
        elif what == "drop_attr" and node.attr:
            del node.attr[data.draw(st.sampled_from(sorted(node.attr)))]
        elif what == "tensor":
            node.attr["value"].tensor.CopyFrom(_random_tensor(data))
        elif what == "shape_dims":
            key = data.draw(st.sampled_from(["shape", "_output_shapes", "value"]))
            attr = node.attr[key]
            if key == "_output_shapes":
                shape = attr.list.shape.add()
            elif key == "value":
                shape = attr.tensor.tensor_shape
            else:
                shape = attr.shape
            shape.dim.add(size=data.draw(st.sampled_from(HUGE)))
        elif what == "input_bad":
            node.input.append(_bad_input(data, out))
        elif what == "drop_input" and node.input:
            del node.input[data.draw(st.integers(0, len(node.input) - 1))]
        elif what == "dup_input" and node.input:
            node.input.append(node.input[0])
        elif what == "cycle":
            other = _pick(data, out)
            node.input.append(other.name)
            other.input.append(node.name)
        elif what == "class":
            node.attr["_class"].CopyFrom(_random_attr(data))
        elif what == "number_attr":
            node.attr["N"].i = data.draw(st.sampled_from(HUGE))
        elif what == "device":
            node.device = data.draw(st.sampled_from(["/job:x/task:-1", "/gpu:99", "::", "a" * 9]))
        elif what == "name":
            node.name = data.draw(st.sampled_from(["", "a:b", "^x", node.name + "_2"]))
        elif what == "bytes":
            raw = bytearray(out.SerializeToString())
            if raw:
                position = data.draw(st.integers(0, len(raw) - 1))
                raw[position] ^= data.draw(st.integers(1, 255))
                try:
                    out = graph_pb2.GraphDef.FromString(bytes(raw))
                except Exception:  # noqa: BLE001 - an unparseable mutation is skipped
                    pass
    return out
