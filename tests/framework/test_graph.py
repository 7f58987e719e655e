"""Graph construction: names, scopes, control dependencies, devices, collections, errors."""

import numpy as np
import pytest

import tensorflux as tf


def test_unique_names_and_name_scopes():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0, name="a")
        b = tf.constant(2.0, name="a")
        assert (a.op.name, b.op.name) == ("a", "a_1")
        with tf.name_scope("outer"):
            c = tf.constant(3.0, name="c")
            with tf.name_scope("inner"):
                d = tf.constant(4.0, name="d")
        with tf.name_scope("outer"):
            e = tf.constant(5.0, name="e")
        assert c.op.name == "outer/c" and d.op.name == "outer/inner/d"
        assert e.op.name == "outer_1/e"
        with tf.name_scope("abs/"):
            f = tf.constant(6.0, name="f")
        assert f.op.name == "abs/f"
        assert g.get_operation_by_name("outer/c") is c.op
        assert g.get_tensor_by_name("outer/inner/d:0") is d
        with pytest.raises(KeyError):
            g.get_tensor_by_name("missing:0")
        with pytest.raises(ValueError):
            g.get_tensor_by_name("outer/c")


def test_python_inputs_become_constants_named_after_the_input():
    # TF's op_def_library names a converted input "<op>/<input name>" (GraphDefs and
    # checkpointed meta graphs are addressed by these names).
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        with tf.name_scope("s"):
            first = tf.add(x, 2.0, name="foo")
            second = tf.add(x, 3.0, name="foo")
            total = tf.reduce_sum(x, 1)
        scaled = x * 2.0
        reshaped = tf.reshape(x, [3, 2])
        dynamic = tf.reshape(x, [tf.shape(x)[0], -1])
        names = {op.name for op in g.get_operations()}
    assert {"s/foo/y", "s/foo_1/y", "s/Sum/reduction_indices", "mul/y", "Reshape/shape",
            "Reshape_1/shape"} <= names
    assert first.op.inputs[1].name == "s/foo/y:0" and second.op.name == "s/foo_1"
    assert total.op.inputs[1].op.type == "Const" and scaled.op.inputs[1].op.type == "Const"
    assert reshaped.shape.as_list() == [3, 2] and dynamic.shape.as_list() == [2, 3]
    assert dynamic.op.inputs[1].op.type == "Pack"


def test_tensor_identity_semantics():
    with tf.Graph().as_default():
        a = tf.constant([1.0, 2.0])
        with pytest.raises(TypeError):
            bool(a)
        with pytest.raises(TypeError):
            iter(a)
        assert a == a and a != tf.constant([1.0, 2.0])
        assert len({a, a}) == 1
        assert a.name == "Const:0" and a.value_index == 0 and a.dtype == tf.float32
        assert a.shape.as_list() == [2]
        a.set_shape([2])
        with pytest.raises(ValueError):
            a.set_shape([3])


def test_control_dependencies_and_version():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0)
        v0 = g.version
        with tf.control_dependencies([a]):
            b = tf.constant(2.0)
            with tf.control_dependencies(None):
                c = tf.constant(3.0)
        assert b.op.control_inputs == [a.op] and c.op.control_inputs == []
        assert g.version == v0 + 2
        with tf.control_dependencies([a]):
            d = tf.identity(a)
        assert d.op.control_inputs == []  # already a data input


def test_device_scopes_and_colocation():
    with tf.Graph().as_default():
        with tf.device("/cpu:1"):
            a = tf.constant(1.0)
            with tf.device("/job:ps/task:2"):
                b = tf.constant(2.0)
        assert a.device == "/device:CPU:1"
        assert b.device == "/job:ps/task:2/device:CPU:1"
        with tf.device(lambda op: "/cpu:3" if op.type == "Const" else ""):
            c = tf.constant(1.0)
        assert c.device == "/device:CPU:3"
        with tf.get_default_graph().colocate_with(a.op):
            d = tf.constant(5.0)
        assert d.op.get_attr("_class") == [("loc:@" + a.op.name).encode()]
        assert d.device == a.device


def test_collections():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0, name="layer1/w")
        b = tf.constant(1.0, name="layer2/w")
        tf.add_to_collection("weights", a)
        tf.add_to_collections(["weights", "all"], b)
        assert tf.get_collection("weights") == [a, b]
        assert tf.get_collection("weights", scope="layer2") == [b]
        ref = tf.get_collection_ref("weights")
        ref.append(3)
        assert len(g.get_collection("weights")) == 3
        assert set(g.get_all_collection_keys()) == {"weights", "all"}


def test_finalize_blocks_new_ops():
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0)
        g.finalize()
        with pytest.raises(RuntimeError):
            tf.constant(2.0)


def test_shape_error_names_the_op_and_location():
    with tf.Graph().as_default():
        a = tf.constant(np.ones((2, 3), np.float32))
        with pytest.raises(ValueError, match="MatMul 'bad'"):
            tf.matmul(a, a, name="bad")
        with pytest.raises(TypeError, match="MatMul"):
            tf.matmul(a, tf.constant(np.ones((3, 2), np.int32)))
        op = tf.identity(a).op
        assert op.location.startswith(__file__)


def test_default_graph_is_per_thread_stack():
    import threading

    g = tf.Graph()
    seen = []
    with g.as_default():
        thread = threading.Thread(target=lambda: seen.append(tf.get_default_graph()))
        thread.start()
        thread.join()
        assert tf.get_default_graph() is g
    assert seen[0] is not g


def test_node_def_and_graph_def():
    with tf.Graph().as_default() as g:
        a = tf.constant([[1.0, 2.0]], name="a")
        b = tf.matmul(a, a, transpose_b=True, name="mm")
        node = b.op.node_def
        assert node.name == "mm" and node.op == "MatMul" and list(node.input) == ["a", "a"]
        assert node.attr["transpose_b"].b is True
        assert node.attr["T"].type == tf.float32.as_datatype_enum
        graph_def = g.as_graph_def()
        assert [n.name for n in graph_def.node] == ["a", "mm"]
        restored = tf.make_ndarray(graph_def.node[0].attr["value"].tensor)
        np.testing.assert_array_equal(restored, [[1.0, 2.0]])
