"""import_graph_def, graph_util and write_graph: GraphDefs in and out, TF-written ones too."""

import json
import os

import numpy as np
import pytest
from google.protobuf import text_format

import tensorflux as tf

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")


def _small_graph_def():
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [2], name="x")
        c = tf.constant([1.0, 2.0], name="c")
        tf.add(x, c, name="y")
    return graph.as_graph_def()


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_round_trip_names_prefixes_and_values(graph):
    graph_def = _small_graph_def()
    y, y_op, x_op = tf.import_graph_def(graph_def, return_elements=["y:0", "y", "x"])
    assert y.name == "import/y:0" and y_op is y.op and x_op.name == "import/x"
    assert y.shape.as_list() == [2] and y.dtype == tf.float32
    (y2,) = tf.import_graph_def(graph_def, return_elements=["y:0"])
    assert y2.name == "import_1/y:0"
    (named,) = tf.import_graph_def(graph_def, return_elements=["y:0"], name="model")
    assert named.name == "model/y:0"
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y, {x_op.outputs[0]: [3.0, 4.0]}), [4.0, 6.0])
    assert tf.import_graph_def(graph_def) is None


def test_empty_name_keeps_names_and_uniquifies_conflicts(graph):
    graph_def = _small_graph_def()
    (first,) = tf.import_graph_def(graph_def, return_elements=["y:0"], name="")
    (second,) = tf.import_graph_def(graph_def, return_elements=["y:0"], name="")
    assert first.name == "y:0" and second.name == "y_1:0"
    assert [t.op.name for t in second.op.inputs] == ["x_1", "c_1"]


def test_input_map_and_control_dependencies(graph):
    graph_def = _small_graph_def()
    z = tf.constant([5.0, 6.0], name="z")
    dep = tf.no_op(name="dep")
    with tf.control_dependencies([dep]):
        y, x_op, c_op = tf.import_graph_def(graph_def, input_map={"x:0": z},
                                            return_elements=["y:0", "x", "c"], name="m")
    assert y.op.inputs[0] is z
    assert x_op.control_inputs == [dep] and c_op.control_inputs == [dep]
    assert y.op.control_inputs == []
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y), [6.0, 8.0])
    (y2,) = tf.import_graph_def(graph_def, input_map={"x": np.float32([1, 1])},
                                return_elements=["y:0"], name="n")
    assert y2.op.inputs[0].op.name == "n/_inputs/Const"
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y2), [2.0, 3.0])


def test_control_input_map(graph):
    with tf.Graph().as_default() as source:
        a = tf.constant(1.0, name="a")
        with tf.control_dependencies([a]):
            tf.identity(tf.constant(2.0, name="b"), name="out")
    marker = tf.no_op(name="marker")
    (out,) = tf.import_graph_def(source.as_graph_def(), input_map={"^a": marker},
                                 return_elements=["out"])
    assert out.control_inputs == [marker]


def test_import_errors_name_the_node(graph):
    graph_def = _small_graph_def()
    with pytest.raises(ValueError, match=r"not found in graph_def: \[nope:0\]"):
        tf.import_graph_def(graph_def, input_map={"nope:0": tf.constant([1.0, 2.0])})
    with pytest.raises(ValueError, match="return tensor 'nope:0' not found"):
        tf.import_graph_def(graph_def, return_elements=["nope:0"])
    with pytest.raises(ValueError, match="return node 'nope' not found"):
        tf.import_graph_def(graph_def, return_elements=["nope"])
    with pytest.raises(ValueError, match=r"Input 0 of node .*y was passed int32 from "
                                         r"Const.*:0 incompatible with expected float32"):
        tf.import_graph_def(graph_def, input_map={"x:0": tf.constant([1, 2])})
    broken = tf.GraphDef()
    broken.CopyFrom(graph_def)
    broken.node[2].op = "FooBar"
    with pytest.raises(tf.errors.NotFoundError, match="'FooBar'.*'y'"):
        tf.import_graph_def(broken)
    broken.CopyFrom(graph_def)
    broken.node[2].input[0] = "missing"
    with pytest.raises(ValueError, match="Node 'y': Unknown input node 'missing'"):
        tf.import_graph_def(broken)
    broken.CopyFrom(graph_def)
    broken.node[2].input.append("c")
    with pytest.raises(ValueError, match="'y'.*3 data inputs.*expects 2"):
        tf.import_graph_def(broken)
    broken.CopyFrom(graph_def)
    broken.node.add().CopyFrom(broken.node[0])
    with pytest.raises(ValueError, match="'x' is not unique"):
        tf.import_graph_def(broken)
    broken.CopyFrom(graph_def)
    broken.node[1].attr["dtype"].type = tf.int32.as_datatype_enum
    with pytest.raises(ValueError, match="y"):
        tf.import_graph_def(broken)
    with pytest.raises(TypeError, match="GraphDef"):
        tf.import_graph_def("not a graph")
    with pytest.raises(TypeError, match="return_elements"):
        tf.import_graph_def(graph_def, return_elements="y:0")


def test_unknown_attrs_are_ignored_with_a_warning(graph):
    graph_def = _small_graph_def()
    graph_def.node[2].attr["from_the_future"].i = 3
    (y,) = tf.import_graph_def(graph_def, return_elements=["y:0"])
    assert "from_the_future" not in y.op.attrs


def test_cycles_not_through_a_merge_are_errors(graph):
    with tf.Graph().as_default() as source:
        a = tf.placeholder(tf.float32, name="a")
        tf.identity(a, name="b")
    graph_def = source.as_graph_def()
    graph_def.node[0].op = "Identity"
    graph_def.node[0].input.append("b")
    del graph_def.node[0].attr["shape"]
    graph_def.node[0].attr["T"].type = tf.float32.as_datatype_enum
    del graph_def.node[0].attr["dtype"]
    with pytest.raises(ValueError, match="cycle"):
        tf.import_graph_def(graph_def)


def test_devices_colocation_and_output_shapes(graph):
    with tf.Graph().as_default() as source:
        with tf.device("/cpu:1"):
            a = tf.placeholder(tf.float32, None, name="a")
        with tf.colocate_with(a):
            b = tf.identity(a, name="b")
        tf.identity(b, name="c")
    graph_def = source.as_graph_def(add_shapes=True)
    graph_def.node[0].attr["_output_shapes"].list.shape[0].CopyFrom(
        tf.TensorShape([3]).as_proto())
    with tf.device("/job:localhost"):
        a2, b2, c2 = tf.import_graph_def(graph_def, return_elements=["a", "b", "c"])
    assert a2.device == "/job:localhost/device:CPU:1"
    assert b2.colocation_groups() == [b"loc:@import/a"] and b2.device == a2.device
    assert c2.device == "/job:localhost"
    assert a2.outputs[0].shape.as_list() == [3]
    assert c2.outputs[0].shape.as_list() == [3]


def test_a_while_loop_round_trips(graph):
    with tf.Graph().as_default() as source:
        n = tf.placeholder(tf.int32, [], name="n")
        _, total = tf.while_loop(lambda i, t: i < n,
                                 lambda i, t: (i + 1, t + tf.cast(i, tf.float32)),
                                 [tf.constant(0), tf.constant(0.0)])
        tf.identity(total, name="total")
    n2, total2 = tf.import_graph_def(source.as_graph_def(), return_elements=["n:0", "total:0"])
    merges = [op for op in graph.get_operations() if op.type == "Merge"]
    assert merges and all(op.inputs[1].op.type == "NextIteration" for op in merges)
    with tf.Session() as sess:
        assert sess.run(total2, {n2: 5}) == 10.0


def test_graph_def_written_by_tensorflow(graph):
    with open(os.path.join(FIXTURES, "while_cond_graph.pb"), "rb") as handle:
        graph_def = tf.GraphDef.FromString(handle.read())
    with open(os.path.join(FIXTURES, "while_cond_graph.json")) as handle:
        expected = json.load(handle)
    assert sorted({node.op for node in graph_def.node}) == expected["ops"]
    x, n, y = tf.import_graph_def(graph_def, return_elements=["x:0", "n:0", "y:0"], name="")
    assert x.dtype == tf.float32 and n.dtype == tf.int32
    with tf.Session() as sess:
        for count, want in expected["y_by_n"].items():
            got = sess.run(y, {x: expected["feed_x"], n: int(count)})
            np.testing.assert_allclose(got, want)


# -- graph_util -----------------------------------------------------------------------------

def _chain_graph_def():
    with tf.Graph().as_default() as source:
        a = tf.placeholder(tf.float32, [], name="a")
        b = tf.identity(a, name="b")
        checked = tf.check_numerics(b, "bad", name="checked")
        c = tf.multiply(checked, 2.0, name="c")
        with tf.control_dependencies([b]):
            tf.add(c, 1.0, name="d")
        tf.constant(7.0, name="unused")
    return source.as_graph_def()


def test_extract_sub_graph(graph):
    graph_def = _chain_graph_def()
    sub = tf.graph_util.extract_sub_graph(graph_def, ["c"])
    names = [node.name for node in sub.node]
    assert "unused" not in names and "d" not in names
    assert names == [n.name for n in graph_def.node if n.name in names]
    assert {"a", "b", "checked", "c"} <= set(names)
    assert sub.versions == graph_def.versions
    with pytest.raises(AssertionError, match="nope is not in graph"):
        tf.graph_util.extract_sub_graph(graph_def, ["nope"])
    with pytest.raises(TypeError):
        tf.graph_util.extract_sub_graph(graph_def, "c")


def test_remove_training_nodes(graph):
    graph_def = _chain_graph_def()
    stripped = tf.graph_util.remove_training_nodes(graph_def)
    by_name = {node.name: node for node in stripped.node}
    assert "checked" not in by_name
    assert "b" in by_name  # b is a control input of d, so it stays
    assert by_name["c"].input[0] == "b"
    protected = tf.graph_util.remove_training_nodes(graph_def, protected_nodes=["checked"])
    assert "checked" in {node.name for node in protected.node}
    (d,) = tf.import_graph_def(stripped, return_elements=["d:0"])
    a = graph.get_tensor_by_name("import/a:0")
    with tf.Session() as sess:
        assert sess.run(d, {a: 3.0}) == 7.0


def test_convert_variables_to_constants(graph):
    x = tf.placeholder(tf.float32, [2], name="x")
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
    skip = tf.Variable([10.0, 20.0], name="skip")
    tf.add(tf.matmul(tf.reshape(x, [1, 2]), w), skip, name="y")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(w, [[2.0, 0.0], [0.0, 2.0]]))
        frozen = tf.graph_util.convert_variables_to_constants(
            sess, graph.as_graph_def(), ["y"], variable_names_blacklist=["skip"])
    ops = {node.name: node.op for node in frozen.node}
    assert ops["w"] == "Const" and ops["skip"] == "VariableV2"
    frozen_all = None
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        frozen_all = tf.graph_util.convert_variables_to_constants(
            sess, graph.as_graph_def(), ["y"])
    with tf.Graph().as_default():
        x2, y2 = tf.import_graph_def(frozen_all, return_elements=["x:0", "y:0"], name="")
        assert not [op for op in tf.get_default_graph().get_operations()
                    if op.type == "VariableV2"]
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y2, {x2: [1.0, 1.0]}), [[14.0, 26.0]])


def test_must_run_on_cpu_and_shape_lookup(graph):
    s = tf.constant(["a"], name="s")
    f = tf.constant([1.0], name="f")
    i = tf.constant([1], name="i")
    v = tf.Variable(1.0, name="v")
    assert tf.graph_util.must_run_on_cpu(s.op) and tf.graph_util.must_run_on_cpu(i.op)
    assert not tf.graph_util.must_run_on_cpu(f.op)
    assert tf.graph_util.must_run_on_cpu(v.op.node_def, pin_variables_on_cpu=True)
    assert not tf.graph_util.must_run_on_cpu(v.op.node_def)
    assert tf.graph_util.tensor_shape_from_node_def_name(graph, "f").as_list() == [1]


def test_write_graph_text_and_binary(graph, tmp_path):
    tf.add(tf.constant(1.0, name="one"), 2.0, name="three")
    text_path = tf.train.write_graph(graph, str(tmp_path / "sub"), "g.pbtxt")
    assert text_path == os.path.join(str(tmp_path / "sub"), "g.pbtxt")
    parsed = text_format.Parse(open(text_path).read(), tf.GraphDef())
    assert parsed == graph.as_graph_def()
    binary_path = tf.train.write_graph(graph.as_graph_def(), str(tmp_path), "g.pb",
                                       as_text=False)
    with open(binary_path, "rb") as handle:
        assert tf.GraphDef.FromString(handle.read()) == graph.as_graph_def()
    assert sorted(os.listdir(tmp_path)) == ["g.pb", "sub"]


def test_proto_exports():
    node = tf.NodeDef(name="a", op="Const")
    node.attr["dtype"].CopyFrom(tf.AttrValue(type=tf.float32.as_datatype_enum))
    graph_def = tf.GraphDef(node=[node])
    assert tf.GraphDef.FromString(graph_def.SerializeToString()) == graph_def


def test_producer_op_list_drops_default_valued_unknown_attrs(graph):
    from tensorflux.protos import op_def_pb2

    graph_def = _small_graph_def()
    graph_def.node[2].attr["newer_flag"].b = True
    producer = op_def_pb2.OpList()
    op = producer.op.add(name="AddV2")
    attr = op.attr.add(name="newer_flag", type="bool")
    attr.default_value.b = True
    (y,) = tf.import_graph_def(graph_def, return_elements=["y:0"], producer_op_list=producer,
                               op_dict={})
    assert "newer_flag" not in y.op.attrs and y.op.type == "AddV2"
