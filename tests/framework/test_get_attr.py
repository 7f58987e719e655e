"""`Operation.get_attr` returns what TensorFlow returns: bytes for strings, DType, shape and
tensor protos, NameAttrList; and the gradients reading string attrs internally still work."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.protos import attr_value_pb2, tensor_pb2, tensor_shape_pb2


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_conv2d_string_and_list_attrs():
    y = tf.nn.conv2d(tf.zeros([1, 4, 4, 1]), tf.zeros([2, 2, 1, 1]), [1, 1, 1, 1], "SAME")
    assert y.op.get_attr("padding") == b"SAME"
    assert y.op.get_attr("data_format") == b"NHWC"
    assert y.op.get_attr("strides") == [1, 1, 1, 1]
    assert y.op.get_attr("explicit_paddings") == []
    assert y.op.get_attr("T") is tf.float32
    assert y.op.get_attr_str("padding") == "SAME"


def test_placeholder_dtype_and_shape():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    assert x.op.get_attr("dtype") == tf.float32
    shape = x.op.get_attr("shape")
    assert isinstance(shape, tensor_shape_pb2.TensorShapeProto)
    assert [d.size for d in shape.dim] == [-1, 3]
    assert tf.TensorShape(shape).as_list() == [None, 3]
    assert tf.placeholder(tf.int32).op.get_attr("shape").unknown_rank


def test_string_list_tensor_and_missing_attrs():
    q = tf.FIFOQueue(3, [tf.float32], shapes=[[2]], shared_name="sn")
    assert q.queue_ref.op.get_attr("shared_name") == b"sn"
    assert q.queue_ref.op.get_attr("container") == b""
    assert q.queue_ref.op.get_attr("component_types") == [tf.float32]
    assert [d.size for d in q.queue_ref.op.get_attr("shapes")[0].dim] == [2]
    v = tf.Variable(1.0, name="v")
    assert v.initializer.get_attr("_class") == [b"loc:@v"]
    assert v.initializer.get_attr_str("_class") == ["loc:@v"]
    c = tf.constant([[1, 2]], name="c")
    proto = c.op.get_attr("value")
    assert isinstance(proto, tensor_pb2.TensorProto)
    np.testing.assert_array_equal(tf.make_ndarray(proto), [[1, 2]])
    with pytest.raises(ValueError, match=r"^Operation 'c' has no attr named 'nope'\.$"):
        c.op.get_attr("nope")


def test_func_attr_is_a_name_attr_list():
    @tf.function
    def double(a):
        return a * 2.0

    y = double(tf.constant(1.5))
    op = y.op
    func_attrs = [k for k, s in op.op_def.attrs.items() if s.kind == "func"]
    assert func_attrs
    value = op.get_attr(func_attrs[0])
    assert isinstance(value, attr_value_pb2.NameAttrList) and value.name
    with tf.Session() as sess:
        assert sess.run(y) == 3.0


def test_import_graph_def_then_get_attr():
    x = tf.placeholder(tf.float32, [None, 5, 5, 2], name="x")
    tf.nn.max_pool(x, [1, 2, 2, 1], [1, 1, 1, 1], "VALID", name="pool")
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="imported")
        pool = g.get_operation_by_name("imported/pool")
        assert pool.get_attr("padding") == b"VALID"
        assert pool.get_attr("ksize") == [1, 2, 2, 1]
        assert pool.get_attr("T") == tf.float32
        assert [d.size for d in g.get_operation_by_name("imported/x").get_attr("shape").dim] \
            == [-1, 5, 5, 2]


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_gradients_reading_string_attrs(data_format):
    """Conv2D (SAME), MaxPool (VALID) and BiasAdd gradients against finite differences."""
    rng = np.random.RandomState(0)
    shape = [1, 4, 4, 2] if data_format == "NHWC" else [1, 2, 4, 4]
    x = tf.placeholder(tf.float64, shape)
    f = tf.constant(rng.uniform(-1, 1, [2, 2, 2, 3]))
    b = tf.constant(rng.uniform(-1, 1, [3]))
    y = tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME", data_format=data_format)
    y = tf.nn.bias_add(y, b, data_format=data_format)
    window = [1, 2, 2, 1] if data_format == "NHWC" else [1, 1, 2, 2]
    y = tf.nn.max_pool(y, window, [1, 1, 1, 1], "VALID", data_format=data_format)
    if data_format == "NCHW":
        assert y.op.get_attr("data_format") == b"NCHW"
    x_value = rng.uniform(-1, 1, shape)
    with tf.Session():
        error = tf.test.compute_gradient_error(x, shape, y, y.shape.as_list(),
                                               x_init_value=x_value)
    assert error < 1e-6
