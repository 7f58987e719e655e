"""Function libraries in GraphDefs: export of traced functions, import of TF-style FunctionDefs
(`node:output_arg:index` body naming) called by PartitionedCall / If / While nodes, errors;
FuncGraph captures; tf.TensorSpec."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import dtypes
from tensorflux.framework import function as function_lib
from tensorflux.framework.tensor_util import make_tensor_proto
from tensorflux.protos import graph_pb2


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _attr_type(node, key, dtype):
    node.attr[key].type = dtypes.as_dtype(dtype).as_datatype_enum


def _arg(signature_list, name, dtype):
    arg = signature_list.add()
    arg.name = name
    arg.type = dtypes.as_dtype(dtype).as_datatype_enum


def _node(fdef_or_graph, name, op, inputs, t=None, **types):
    node = (fdef_or_graph.node_def if hasattr(fdef_or_graph, "node_def")
            else fdef_or_graph.node).add()
    node.name, node.op = name, op
    node.input.extend(inputs)
    if t is not None:
        _attr_type(node, "T", t)
    for key, dtype in types.items():
        _attr_type(node, key, dtype)
    return node


def _const(fdef, name, value, dtype):
    node = _node(fdef, name, "Const", [], dtype=dtype)
    node.attr["value"].tensor.CopyFrom(make_tensor_proto(np.asarray(value, dtype)))
    return node


def _scale_and_split_fn(library):
    """f(x, y) = (2x + y) split in two halves, then first half + second half (float32 [4])."""
    fdef = library.function.add()
    sig = fdef.signature
    sig.name = "scale_and_split"
    _arg(sig.input_arg, "x", np.float32)
    _arg(sig.input_arg, "y", np.float32)
    _arg(sig.output_arg, "identity", np.float32)
    _const(fdef, "two", 2.0, np.float32)
    _const(fdef, "axis", 0, np.int32)
    _node(fdef, "mul", "Mul", ["x", "two:output:0"], np.float32)
    _node(fdef, "add", "AddV2", ["mul:z:0", "y"], np.float32)
    split = _node(fdef, "split", "Split", ["axis:output:0", "add:z:0"], np.float32)
    split.attr["num_split"].i = 2
    _node(fdef, "sum", "AddV2", ["split:output:0", "split:output:1"], np.float32)
    _node(fdef, "Identity", "Identity", ["sum:z:0"], np.float32)
    fdef.ret["identity"] = "Identity:output:0"


def _loop_fns(library):
    cond = library.function.add()
    cond.signature.name = "less_than"
    for name in ("i", "acc", "n"):
        _arg(cond.signature.input_arg, name, np.int32)
    _arg(cond.signature.output_arg, "out", np.bool_)
    _node(cond, "less", "Less", ["i", "n"], np.int32)
    cond.ret["out"] = "less:z:0"
    body = library.function.add()
    body.signature.name = "accumulate"
    for name in ("i", "acc", "n"):
        _arg(body.signature.input_arg, name, np.int32)
    for name in ("i_next", "acc_next", "n_out"):
        _arg(body.signature.output_arg, name, np.int32)
    _const(body, "one", 1, np.int32)
    _node(body, "next", "AddV2", ["i", "one:output:0"], np.int32)
    _node(body, "sq", "Mul", ["i", "i"], np.int32)
    _node(body, "total", "AddV2", ["acc", "sq:z:0"], np.int32)
    body.ret.update({"i_next": "next:z:0", "acc_next": "total:z:0", "n_out": "n"})


def _branch_fns(library):
    for name, op in (("negate", "Neg"), ("square", "Square")):
        fdef = library.function.add()
        fdef.signature.name = name
        _arg(fdef.signature.input_arg, "v", np.float32)
        _arg(fdef.signature.output_arg, "out", np.float32)
        _node(fdef, "r", op, ["v"], np.float32)
        fdef.ret["out"] = "r:y:0"


def _tf_style_graph_def():
    graph_def = graph_pb2.GraphDef()
    graph_def.versions.producer = 134
    _scale_and_split_fn(graph_def.library)
    _loop_fns(graph_def.library)
    _branch_fns(graph_def.library)
    for name, dtype in (("x", np.float32), ("y", np.float32), ("n", np.int32),
                        ("pred", np.bool_)):
        _node(graph_def, name, "Placeholder", [], dtype=dtype)
    call = _node(graph_def, "call", "StatefulPartitionedCall", ["x", "y"])
    call.attr["Tin"].list.type.extend([dtypes.float32.as_datatype_enum] * 2)
    call.attr["Tout"].list.type.append(dtypes.float32.as_datatype_enum)
    call.attr["f"].func.name = "scale_and_split"
    _const(graph_def, "zero", 0, np.int32)
    loop = _node(graph_def, "loop", "While", ["zero", "zero", "n"])
    loop.attr["T"].list.type.extend([dtypes.int32.as_datatype_enum] * 3)
    loop.attr["cond"].func.name = "less_than"
    loop.attr["body"].func.name = "accumulate"
    branch = _node(graph_def, "branch", "If", ["pred", "x"], Tcond=np.bool_)
    branch.attr["Tin"].list.type.append(dtypes.float32.as_datatype_enum)
    branch.attr["Tout"].list.type.append(dtypes.float32.as_datatype_enum)
    branch.attr["then_branch"].func.name = "negate"
    branch.attr["else_branch"].func.name = "square"
    return graph_def


def test_import_tf_style_graph_def_with_library_runs_calls_loops_and_branches():
    graph_def = _tf_style_graph_def()
    call, loop_acc, branch = tf.import_graph_def(
        graph_def, return_elements=["call:0", "loop:1", "branch:0"], name="")
    assert (call.dtype, loop_acc.dtype, branch.dtype) == (tf.float32, tf.int32, tf.float32)
    g = tf.get_default_graph()
    x, y = g.get_tensor_by_name("x:0"), g.get_tensor_by_name("y:0")
    n, pred = g.get_tensor_by_name("n:0"), g.get_tensor_by_name("pred:0")
    xv = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    yv = np.array([0.5, 0.25, -1.0, 2.0], np.float32)
    with tf.Session() as sess:
        got = sess.run([call, loop_acc, branch], {x: xv, y: yv, n: 5, pred: True})
        ref = 2 * xv + yv
        np.testing.assert_allclose(got[0], ref[:2] + ref[2:])
        assert got[1] == sum(i * i for i in range(5))
        np.testing.assert_allclose(got[2], -xv)
        np.testing.assert_allclose(sess.run(branch, {x: xv, pred: False}), xv * xv)
    assert sorted(g._functions) == ["accumulate", "less_than", "negate", "scale_and_split",
                                    "square"]


def test_imported_library_round_trips_through_as_graph_def():
    tf.import_graph_def(_tf_style_graph_def(), name="")
    exported = tf.get_default_graph().as_graph_def()
    names = sorted(f.signature.name for f in exported.library.function)
    assert names == ["accumulate", "less_than", "negate", "scale_and_split", "square"]
    with tf.Graph().as_default():
        (acc,) = tf.import_graph_def(exported, return_elements=["loop:1"], name="again")
        n = tf.get_default_graph().get_tensor_by_name("again/n:0")
        with tf.Session() as sess:
            assert sess.run(acc, {n: 4}) == 0 + 1 + 4 + 9


def test_traced_function_exports_tf_style_function_def_and_reimports():
    x = tf.placeholder(tf.float32, [3], name="x")
    w = tf.placeholder(tf.float32, [], name="w")
    f = tf.function(lambda a: tf.split(a * w, 3)[1] + 1.0)
    tf.identity(f(x), name="y")
    graph_def = tf.get_default_graph().as_graph_def()
    (fdef,) = graph_def.library.function
    assert [a.name for a in fdef.signature.input_arg] == ["arg0", "captured_w"]
    body_inputs = [i for node in fdef.node_def for i in node.input]
    assert "mul:z:0" in body_inputs and any(i.startswith("split:output:") for i in body_inputs)
    assert fdef.ret["output_0"].endswith(":z:0")
    with tf.Graph().as_default():
        (y2,) = tf.import_graph_def(graph_def, return_elements=["y:0"], name="")
        g = tf.get_default_graph()
        with tf.Session() as sess:
            got = sess.run(y2, {g.get_tensor_by_name("x:0"): [1.0, 2.0, 3.0],
                                g.get_tensor_by_name("w:0"): 4.0})
    assert got.tolist() == [9.0]


def test_import_errors_name_the_node_or_function():
    graph_def = _tf_style_graph_def()
    graph_def.node[4].attr["f"].func.name = "missing_fn"
    with pytest.raises(ValueError, match="missing_fn"):
        tf.import_graph_def(graph_def, name="a")
    graph_def = _tf_style_graph_def()
    graph_def.library.function[0].node_def[2].input[1] = "two:nope:0"
    with tf.Graph().as_default(), pytest.raises(ValueError, match="no output 'nope:0'"):
        tf.import_graph_def(graph_def, name="b")
    graph_def = _tf_style_graph_def()
    del graph_def.library.function[0].ret["identity"]
    with tf.Graph().as_default(), pytest.raises(ValueError, match="no ret entry"):
        tf.import_graph_def(graph_def, name="c")
    with tf.Graph().as_default():
        tf.import_graph_def(_tf_style_graph_def(), name="d")
        tf.import_graph_def(_tf_style_graph_def(), name="e")  # the same library again: fine
        changed = _tf_style_graph_def()
        changed.library.function[0].node_def[0].attr["value"].tensor.CopyFrom(
            make_tensor_proto(np.float32(3.0)))
        with pytest.raises(ValueError, match="different function with the same name"):
            tf.import_graph_def(changed, name="f")


def test_func_graph_captures_constants_by_value_and_others_as_inputs():
    outer = tf.get_default_graph()
    c = tf.constant([1.0, 2.0])
    p = tf.placeholder(tf.float32, [2])
    v = tf.Variable([0.0, 0.0])
    fn, structure = function_lib.trace(
        lambda a: (a + c + p, tf.assign(v, a)), (tf.constant([0.0, 0.0]),), {},
        lambda leaf: (leaf.dtype, leaf.shape) if isinstance(leaf, tf.Tensor) else None,
        "captures", outer)
    assert structure == (0, 1)
    captured = fn.captured_inputs
    assert p in captured and c not in captured
    ref_inputs = [t for t in fn.inputs if t.dtype.is_ref_dtype]
    assert len(ref_inputs) == 1  # the variable arrives by reference
    assert fn.stateful and [op.type for op in fn.control_outputs] == ["Assign"]


def test_tensor_spec():
    spec = tf.TensorSpec([None, 3], tf.float32, "x")
    assert spec.shape.as_list() == [None, 3] and spec.dtype == tf.float32 and spec.name == "x"
    assert spec.is_compatible_with(tf.TensorSpec([2, 3], tf.float32))
    assert not spec.is_compatible_with(tf.TensorSpec([2, 4], tf.float32))
    assert not spec.is_compatible_with(tf.TensorSpec([2, 3], tf.float64))
    assert spec.is_compatible_with(np.zeros((5, 3), np.float32))
    t = tf.placeholder(tf.int32, [4], name="ids")
    from_t = tf.TensorSpec.from_tensor(t)
    assert from_t == tf.TensorSpec([4], tf.int32, "ids") and hash(from_t) == hash(
        tf.TensorSpec([4], tf.int32, "ids"))
    assert from_t != tf.TensorSpec([4], tf.int32)
    with pytest.raises(ValueError, match="tf.Tensor"):
        tf.TensorSpec.from_tensor(3)
    assert "TensorSpec(shape=" in repr(spec)


def _chain_library(graph_def, depth, recursive=False):
    for k in range(depth):
        fdef = graph_def.library.function.add()
        fdef.signature.name = f"f{k}"
        _arg(fdef.signature.input_arg, "x", np.float32)
        _arg(fdef.signature.output_arg, "y", np.float32)
        callee = f"f{k + 1}" if k + 1 < depth else ("f0" if recursive else None)
        if callee is None:
            _node(fdef, "r", "Neg", ["x"], np.float32)
            fdef.ret["y"] = "r:y:0"
            continue
        call = _node(fdef, "call", "PartitionedCall", ["x"])
        call.attr["Tin"].list.type.append(dtypes.float32.as_datatype_enum)
        call.attr["Tout"].list.type.append(dtypes.float32.as_datatype_enum)
        call.attr["f"].func.name = callee
        fdef.ret["y"] = "call:output:0"
    _node(graph_def, "x", "Placeholder", [], dtype=np.float32)
    top = _node(graph_def, "top", "PartitionedCall", ["x"])
    top.attr["Tin"].list.type.append(dtypes.float32.as_datatype_enum)
    top.attr["Tout"].list.type.append(dtypes.float32.as_datatype_enum)
    top.attr["f"].func.name = "f0"
    return graph_def


def test_nested_library_calls_run_and_recursion_or_deep_nesting_is_refused():
    (y,) = tf.import_graph_def(_chain_library(graph_pb2.GraphDef(), 4), name="",
                               return_elements=["top:0"])
    x = tf.get_default_graph().get_tensor_by_name("x:0")
    with tf.Session() as sess:
        assert sess.run(y, {x: 2.5}) == pytest.approx(-2.5)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="calls itself"):
        tf.import_graph_def(_chain_library(graph_pb2.GraphDef(), 3, recursive=True))
    deep = _chain_library(graph_pb2.GraphDef(), function_lib.MAX_NESTING + 2)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="nest deeper"):
        tf.import_graph_def(deep)


def test_tf_written_call_attrs_binary_config_proto_and_private_body_attrs():
    graph_def = graph_pb2.GraphDef()
    fdef = graph_def.library.function.add()
    fdef.signature.name = "negate_fn"
    _arg(fdef.signature.input_arg, "x", np.float32)
    _arg(fdef.signature.output_arg, "identity", np.float32)
    fdef.attr["_input_shapes"].list.shape.add()
    neg = _node(fdef, "Neg", "Neg", ["x"], np.float32)
    neg.attr["_output_shapes"].list.shape.add().unknown_rank = True
    fdef.ret["identity"] = "Neg:y:0"
    _node(graph_def, "x", "Placeholder", [], dtype=np.float32)
    call = _node(graph_def, "call", "StatefulPartitionedCall", ["x"])
    call.attr["Tin"].list.type.append(dtypes.float32.as_datatype_enum)
    call.attr["Tout"].list.type.append(dtypes.float32.as_datatype_enum)
    call.attr["f"].func.name = "negate_fn"
    config = b"\n\x07\n\x03CPU\x10\x01\n\x07\n\x03GPU\x10\x002\x02J\x008\x01\x82\x01\x00"
    call.attr["config_proto"].s = config
    (y,) = tf.import_graph_def(graph_def, return_elements=["call:0"], name="")
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {"x:0": [1.0, -2.0]}), [-1.0, 2.0])
    exported = tf.get_default_graph().as_graph_def()
    (node,) = [n for n in exported.node if n.name == "call"]
    assert node.attr["config_proto"].s == config and node.attr["f"].func.name == "negate_fn"


def test_functions_survive_a_meta_graph_and_checkpoint_round_trip(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        x = tf.placeholder(tf.float32, [2], name="x")
        f = tf.function(lambda a: a * v + 1.0)
        tf.identity(f(x), name="y")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.assign(v, [3.0, -1.0]))
            saver.save(sess, str(tmp_path / "model"))
    with tf.Graph().as_default():
        restorer = tf.train.import_meta_graph(str(tmp_path / "model.meta"))
        with tf.Session() as sess:
            restorer.restore(sess, str(tmp_path / "model"))
            got = sess.run("y:0", {"x:0": [2.0, 5.0]})
    np.testing.assert_allclose(got, [7.0, -4.0])


def test_tensor_spec_most_specific_compatible_type():
    a = tf.TensorSpec([2, 3], tf.float32)
    merged = a.most_specific_compatible_type(tf.TensorSpec([2, 4], tf.float32))
    assert merged.shape.as_list() == [2, None] and merged.dtype == tf.float32
    assert a.most_specific_compatible_type(tf.TensorSpec([2], tf.float32)).shape.ndims is None
    with pytest.raises(ValueError, match="not compatible"):
        a.most_specific_compatible_type(tf.TensorSpec([2, 3], tf.int32))
