"""Session handles: GetSessionHandle / GetSessionTensor / DeleteSessionTensor and TensorHandle."""

import threading

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401 - autouse fixture

import tensorflux as tf
from tensorflux.ops.data_flow.session_ops import TensorHandle

COVERED_OPS = {"GetSessionHandle", "GetSessionTensor", "DeleteSessionTensor"}


def test_handle_roundtrip_values_and_shapes():
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    h_op = tf.get_session_handle(tf.constant(x) * 2.0)
    assert h_op.op.type == "GetSessionHandle" and h_op.dtype == tf.string
    assert h_op.get_shape().as_list() == []
    with tf.Session() as sess:
        h = sess.run(h_op)
        assert isinstance(h, TensorHandle) and h.dtype == tf.float64
        node, ident, device = h.handle.split(";")
        assert node == h_op.op.name and ident == "0" and device.endswith("CPU:0")
        assert str(h) == h.handle
        np.testing.assert_array_equal(h.eval(), x * 2.0)
        holder, value = tf.get_session_tensor(h.handle, tf.float64)
        assert value.get_shape().ndims is None and value.dtype == tf.float64
        np.testing.assert_array_equal(sess.run(value + 1.0, {holder: h.handle}), x * 2 + 1)
        # A later run of the same handle op keeps a second, independent tensor.
        h2 = sess.run(h_op)
        assert h2.handle != h.handle
        np.testing.assert_array_equal(h2.eval(), x * 2.0)


def test_feeding_a_tensor_handle_feeds_its_value():
    a = tf.placeholder(tf.float32, [])
    b = a * 3.0
    n = tf.placeholder(tf.int32, [])
    with tf.Session() as sess:
        h = sess.run(tf.get_session_handle(tf.constant(7.0)))
        assert sess.run(b, {a: h}) == 21.0
        with pytest.raises(TypeError, match="dtype"):
            sess.run(n + 1, {n: h})


def test_delete_and_errors():
    with tf.Session() as sess:
        h = sess.run(tf.get_session_handle(tf.constant([1, 2], tf.int32)))
        holder, wrong = tf.get_session_tensor(h.handle, tf.float32)
        with pytest.raises(tf.errors.InternalError, match="int32"):
            sess.run(wrong, {holder: h.handle})
        holder, deleter = tf.delete_session_tensor(h.handle)
        assert deleter.type == "DeleteSessionTensor"
        sess.run(deleter, {holder: h.handle})
        with pytest.raises(tf.errors.InvalidArgumentError, match="not in the session store"):
            h.eval()
        with pytest.raises(tf.errors.InvalidArgumentError, match="not in the session store"):
            h.delete()
    with pytest.raises(TypeError, match="must be of type Tensor"):
        tf.get_session_handle(np.float32(1.0))


def test_kept_value_is_a_snapshot_and_lives_per_session():
    v = tf.Variable([1.0, 2.0])
    h_op = tf.get_session_handle(v.value())
    with tf.Session() as sess:
        sess.run(v.initializer)
        h = sess.run(h_op)
        sess.run(v.assign([5.0, 6.0]))
        np.testing.assert_array_equal(h.eval(), [1.0, 2.0])
    with tf.Session() as other:
        holder, value = tf.get_session_tensor(h.handle, tf.float32)
        with pytest.raises(tf.errors.InvalidArgumentError):
            other.run(value, {holder: h.handle})


def test_concurrent_handles_are_unique():
    h_op = tf.get_session_handle(tf.constant(1))
    handles = []
    with tf.Session() as sess:
        def work():
            for _ in range(20):
                handles.append(sess.run(h_op).handle)

        threads = [threading.Thread(target=work) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(set(handles)) == 60
