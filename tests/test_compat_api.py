"""The TF1 compatibility surface: behaviour switches, tf.compat, introspection helpers."""

import importlib
import logging

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_disable_switches_are_no_ops_and_queries_report_tf1():
    # enable_resource_variables is a real switch (tests/ops/state/test_resource_variables.py)
    for name in ["disable_v2_behavior", "disable_eager_execution", "disable_resource_variables",
                 "disable_control_flow_v2",
                 "enable_control_flow_v2", "disable_tensor_equality", "enable_tensor_equality",
                 "disable_v2_tensorshape", "enable_v2_tensorshape"]:
        assert getattr(tf, name)() is None
    assert tf.executing_eagerly() is False
    assert tf.resource_variables_enabled() is False
    assert tf.control_flow_v2_enabled() is False
    # Graph mode still works after the switches.
    with tf.Session() as sess:
        assert sess.run(tf.constant(2) + 3) == 5


@pytest.mark.parametrize("name", ["enable_eager_execution", "enable_v2_behavior"])
def test_enabling_eager_raises_a_clear_value_error(name):
    with pytest.raises(ValueError, match=f"{name}: .*eager execution is not supported"):
        getattr(tf, name)()


def test_compat_v1_is_the_package():
    assert tf.compat.v1 is tf
    assert tf.compat.v1.placeholder is tf.placeholder
    module = importlib.import_module("tensorflux.compat.v1")
    assert module is tf
    from tensorflux.compat import v1

    assert v1 is tf


def test_compat_string_helpers():
    assert tf.compat.as_bytes("é") == "é".encode()
    assert tf.compat.as_bytes(bytearray(b"ab")) == b"ab"
    assert tf.compat.as_text(b"abc") == "abc"
    assert tf.compat.as_str("x") == "x"
    assert tf.compat.as_str_any(3) == "3"
    with pytest.raises(TypeError, match="Expected binary or unicode string, got 3"):
        tf.compat.as_bytes(3)
    with pytest.raises(TypeError, match="Expected binary or unicode string"):
        tf.compat.as_text(None)


def test_get_logger_is_the_tensorflow_logger():
    logger = tf.get_logger()
    assert isinstance(logger, logging.Logger)
    assert logger.name == "tensorflow"
    assert logger is logging.getLogger("tensorflow")


def test_is_tensor_and_is_numeric_tensor():
    p = tf.placeholder(tf.float32, [2])
    v = tf.Variable(1.0)
    sp = tf.SparseTensor([[0]], [1.0], [2])
    assert tf.is_tensor(p) and tf.is_tensor(v) and tf.is_tensor(sp)
    assert not tf.is_tensor(np.zeros(2)) and not tf.is_tensor(3)
    assert tf.is_numeric_tensor(p) and tf.is_numeric_tensor(tf.constant([1], tf.int64))
    assert not tf.is_numeric_tensor(tf.constant("a"))
    assert not tf.is_numeric_tensor(tf.constant(True))
    assert not tf.is_numeric_tensor(np.zeros(2))


def test_get_static_value():
    assert tf.get_static_value(3) == 3
    assert tf.get_static_value([1, 2]) == [1, 2]
    p = tf.placeholder(tf.float32, [None, 3])
    assert tf.get_static_value(p) is None
    assert tf.get_static_value(tf.shape(p)) is None
    np.testing.assert_array_equal(tf.get_static_value(tf.shape(tf.zeros([2, 5]))), [2, 5])
    value = tf.get_static_value(tf.constant([1.5, 2.0]))
    assert value.dtype == np.float32
    np.testing.assert_array_equal(value, [1.5, 2.0])
    assert tf.get_static_value(tf.Variable([1.0])) is None


def test_dimension_helpers():
    shape = tf.TensorShape([None, 3])
    assert tf.dimension_value(shape[1]) == 3
    assert tf.dimension_value(shape[0]) is None
    assert tf.dimension_value(5) == 5 and tf.dimension_value(None) is None
    assert tf.dimension_at_index(shape, 1).value == 3
    assert tf.dimension_at_index(tf.TensorShape(None), 4).value is None
    assert tf.compat.dimension_value(tf.Dimension(7)) == 7


def test_arg_max_arg_min_and_to_complex():
    x = np.array([[1, 3, 2], [4, 0, 9]], np.float32)
    a, b = tf.arg_max(x, 1), tf.arg_min(x, 0, output_type=tf.int32)
    c64, c128 = tf.to_complex64([1.0, 2.0]), tf.to_complex128(tf.constant(1.0, tf.float64))
    assert a.dtype == tf.int64 and b.dtype == tf.int32
    assert c64.op.name == "ToComplex64" and c128.dtype == tf.complex128
    with tf.Session() as sess:
        va, vb, vc = sess.run([a, b, c64])
    np.testing.assert_array_equal(va, np.argmax(x, 1))
    np.testing.assert_array_equal(vb, np.argmin(x, 0))
    assert vc.dtype == np.complex64
    np.testing.assert_array_equal(vc, [1 + 0j, 2 + 0j])


def test_assert_near():
    x = tf.placeholder(tf.float32, [2])
    ok = tf.assert_near(x, [1.0, 2.0], atol=0.1, rtol=0.0)
    with tf.control_dependencies([ok]):
        y = tf.identity(x)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1.05, 1.95]}), np.float32([1.05, 1.95]))
        with pytest.raises(errors.InvalidArgumentError, match="not equal to tolerance"):
            sess.run(y, {x: [1.0, 2.5]})
        default_tol = tf.assert_near(x, x * (1 + 1e-7))
        sess.run(default_tol, {x: [1.0, 3.0]})
    with pytest.raises(TypeError, match="float or complex"):
        tf.assert_near([1, 2], [1, 2])


def test_forward_compatibility_horizon_and_small_aliases(tmp_path):
    import datetime

    import tensorflux as tf

    assert tf.compat.forward_compatible(2019, 1, 1)
    assert not tf.compat.forward_compatible(2030, 1, 1)
    with tf.compat.forward_compatibility_horizon(2031, 1, 1):
        assert tf.compat.forward_compatible(2030, 1, 1)
    assert not tf.compat.forward_compatible(2030, 1, 1)
    assert isinstance(datetime.date.today(), datetime.date)
    target = str(tmp_path / "made")
    tf.gfile.MkDir(target)
    assert tf.gfile.IsDirectory(target)
    with tf.Graph().as_default(), tf.Session() as sess:
        table = tf.contrib.lookup.index_table_from_tensor(tf.constant(["a", "b"]))
        ids = table.lookup(tf.constant(["b", "z"]))
        sess.run(tf.initializers.tables_initializer())
        assert sess.run(ids).tolist() == [1, -1]
