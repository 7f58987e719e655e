"""TF's control_flow_ops helpers over refs, variables and composites: `_Identity`, `_Enter`,
`ref_switch`, `ref_merge`, `ref_select`, `_SwitchRefOrTensor`; Enter's static shape (only a
loop constant keeps it, unless set by `enter`); merge's (output, value_index) namedtuple."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.ops.array import forwarding
from tensorflux.ops.control_flow import primitives as cf
from tensorflux.ops.control_flow import ref_helpers as rh


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_enter_shape_rule():
    p = tf.placeholder(tf.float32, [2, 3])
    assert cf.Enter(p, frame_name="f", is_constant=True).shape.as_list() == [2, 3]
    assert cf.Enter(p, frame_name="f", is_constant=False).shape.ndims is None
    assert cf.enter(p, "f").shape.as_list() == [2, 3]
    assert rh._Enter(p, "f", use_input_shape=False).shape.ndims is None


def test_enter_assign_exit_on_a_variable_ref():
    v = tf.Variable(4)
    entered = rh._Enter(v, "frame", is_constant=True)
    assert entered.dtype.is_ref_dtype
    nine = cf.enter(tf.constant(9), "frame")
    out = cf.exit(cf.with_dependencies([tf.assign(entered, nine)], entered))
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(out) == 9
        assert sess.run(v) == 9


def test_sparse_identity_and_enter_exit_keep_components():
    st = tf.SparseTensor([[0, 5], [2, 1]], [1.5, -2.0], [4, 6])
    same = rh._Identity(st)
    through = cf.exit(rh._Enter(st, "frame"))
    with tf.Session() as sess:
        for result in (same, through):
            ind, val, shape = sess.run([result.indices, result.values, result.dense_shape])
            np.testing.assert_array_equal(ind, [[0, 5], [2, 1]])
            np.testing.assert_allclose(val, [1.5, -2.0])
            np.testing.assert_array_equal(shape, [4, 6])


@pytest.mark.parametrize("pred", [True, False])
def test_ref_switch_then_merge(pred):
    v = tf.Variable([1.0, 2.0])
    f, t = rh._SwitchRefOrTensor(v, tf.constant(pred))
    updated = tf.assign(t if pred else f, [5.0, 6.0])
    merged = rh.ref_merge(rh.ref_switch(v, tf.constant(pred)))
    assert merged.output.dtype.is_ref_dtype
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_allclose(sess.run(updated), [5.0, 6.0])
        value, index = sess.run([merged.output, merged.value_index])
    np.testing.assert_allclose(value, [5.0, 6.0])
    assert index == (1 if pred else 0)


def test_merge_returns_named_outputs():
    f, t = cf.switch(tf.constant([3, 4]), tf.constant(False))
    merged = cf.merge([f, t])
    with tf.Session() as sess:
        out, index = sess.run([merged.output, merged.value_index])
    np.testing.assert_array_equal(out, [3, 4])
    assert index == 0


def test_ref_select_value_and_shape():
    index = tf.placeholder(tf.int32)
    a, b = tf.Variable([[1.0, 2.0]]), tf.Variable([[3.0, 4.0]])
    c = tf.Variable(tf.placeholder_with_default([[0.0, 0.0]], [None, 2]), validate_shape=False)
    assert rh.ref_select(index, [a, b]).shape.as_list() == [1, 2]
    assert rh.ref_select(index, [a, c]).shape.ndims is None  # not fully defined
    chosen = rh.ref_select(index, [a, b])
    with tf.Session() as sess:
        sess.run([a.initializer, b.initializer])
        np.testing.assert_allclose(sess.run(chosen, {index: 1}), [[3.0, 4.0]])
        with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
            sess.run(chosen, {index: 2})


def test_ref_loop_variable_stays_a_ref_and_carries_gradients():
    var = tf.Variable(2.5)
    seen = []

    def body(i, x):
        seen.append(x.dtype.is_ref_dtype)
        return i + 1, forwarding.RefIdentity(x)

    i, x = tf.while_loop(lambda i, x: i < 4, body, [tf.constant(0), var._ref()])
    assert seen == [True]
    assert x.dtype.is_ref_dtype and not i.dtype.is_ref_dtype
    grad = tf.gradients([x], [var._ref()], grad_ys=[tf.constant(3.0)])[0]
    with tf.Session() as sess:
        sess.run(var.initializer)
        assert sess.run([i, x, grad]) == [4, 2.5, 3.0]
