"""Static shapes through Enter/Merge/Switch/Exit/NextIteration as TF1's control flow gives
them (compared with TensorFlow 2.21, control flow v1), checked against run values."""

import numpy as np
import pytest
from op_helpers import (
    graph,  # noqa: F401 (graph: autouse fixture)
    run,
)

import tensorflux as tf
from tensorflux.ops.control_flow import primitives


def ph(shape, dtype=tf.float32):
    return tf.placeholder(dtype, shape)


def test_loop_vars_keep_their_shape_inside_and_after():
    x = ph([None, 3])
    seen = {}

    def body(i, v):
        seen["inside"] = v.shape.as_list()
        return i + 1, v * 2.0
    _, out = tf.while_loop(lambda i, v: i < 3, body, [tf.constant(0), x])
    assert seen["inside"] == [None, 3] and out.shape.as_list() == [None, 3]
    value = run(out, {x: np.ones([2, 3])})
    np.testing.assert_array_equal(value, 8 * np.ones([2, 3]))


def test_shape_functions_inside_a_loop_use_constants():
    outer = ph([4, 3])
    seen = {}

    def body(i):
        seen["fill"] = tf.fill(tf.stack([i, 3]), 0.0).shape.as_list()
        seen["reshape"] = tf.reshape(tf.zeros([12]), tf.shape(outer)).shape.as_list()
        return i + 1
    tf.while_loop(lambda i: i < 3, body, [tf.constant(0)])
    assert seen == {"fill": [None, 3], "reshape": [4, 3]}


def test_shape_invariants_relax_the_loop_shape():
    x = tf.zeros([1, 3])
    seen = {}

    def body(v):
        seen["inside"] = v.shape.as_list()
        return tf.concat([v, v], 0)
    out = tf.while_loop(lambda v: tf.shape(v)[0] < 4, body, [x],
                        shape_invariants=[tf.TensorShape([None, 3])])
    assert seen["inside"] == [None, 3] and out.shape.as_list() == [None, 3]
    assert run(out).shape == (4, 3)
    _, free = tf.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, tf.reshape(v, [-1])),
                            [tf.constant(0), x],
                            shape_invariants=[tf.TensorShape([]), tf.TensorShape(None)])
    assert free.shape.ndims is None and run(free).shape == (3,)


def test_body_changing_the_shape_without_invariants_raises():
    x = tf.zeros([1, 3])
    with pytest.raises(ValueError, match=r"'zeros:0' enters the loop with shape \(1, 3\), but "
                                         r"has shape \(2, 3\) after one iteration"):
        tf.while_loop(lambda v: tf.shape(v)[0] < 4, lambda v: tf.concat([v, v], 0), [x])
    with pytest.raises(ValueError, match=r"shape \(6,\) after one iteration"):
        tf.while_loop(lambda v: tf.size(v) < 10, lambda v: tf.reshape(v, [-1]),
                      [tf.zeros([2, 3])])
    with pytest.raises(ValueError, match="not compatible with the initial shape"):
        tf.while_loop(lambda v: tf.size(v) < 10, lambda v: v, [ph([None, 3])],
                      shape_invariants=[tf.TensorShape([2, 3])])


def test_more_specific_body_keeps_the_general_loop_shape():
    x = ph([None, 3])
    _, out = tf.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, tf.reshape(v, [2, 3])),
                           [tf.constant(0), x])
    assert out.shape.as_list() == [None, 3]
    np.testing.assert_array_equal(run(out, {x: np.ones([2, 3])}), np.ones([2, 3]))


def test_merge_gives_the_most_specific_compatible_shape():
    assert primitives.merge([ph([None, 3]), ph([2, None])])[0].shape.as_list() == [None, None]
    assert primitives.merge([ph([None, 3]), ph([2])])[0].shape.ndims is None
    assert primitives.merge([ph([5, 3]), ph([5, 3])])[0].shape.as_list() == [5, 3]
    assert primitives.merge([ph(None), ph([2, 3])])[0].shape.ndims is None
    assert primitives.merge([ph([5, 3]), ph([5, 3])])[1].shape.as_list() == []
    false, true = primitives.switch(ph([None, 3]), ph([], tf.bool))
    assert false.shape.as_list() == true.shape.as_list() == [None, 3]
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        primitives.switch(ph([2]), ph([2], tf.bool))


def test_cond_outputs_merge_branch_shapes():
    p = ph([], tf.bool)
    y = tf.cond(p, lambda: tf.zeros([2, 3]), lambda: tf.ones([2, 4]))
    assert y.shape.as_list() == [2, None]
    assert run(y, {p: False}).shape == (2, 4)
    assert tf.cond(p, lambda: tf.zeros([2, 3]), lambda: tf.zeros([2])).shape.ndims is None
    a, b = tf.cond(p, lambda: (ph([None, 3]), tf.zeros([2])),
                   lambda: (ph([4, 3]), tf.zeros([2])))
    assert a.shape.as_list() == [None, 3] and b.shape.as_list() == [2]
