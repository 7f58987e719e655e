"""weights_broadcast: static (ValueError) and run-time (InvalidArgumentError) checks that loss
and metric weights broadcast to the values, and the broadcast itself."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf
from tensorflux.ops.math import weights_broadcast

VALUES = np.arange(24, dtype=np.float32).reshape(3, 2, 4)
GOOD = [(), (1, 1, 1), (3, 1, 1), (1, 2, 1), (1, 1, 4), (3, 2, 1), (3, 1, 4), (3, 2, 4)]
BAD = [(3,), (4,), (3, 2), (2, 2, 2, 2), (3, 2, 2), (2, 1, 1), (1, 1, 3)]


def _numpy_rule(w_shape, v_shape):
    return len(w_shape) == 0 or (len(w_shape) == len(v_shape) and all(
        w in (1, v) for w, v in zip(w_shape, v_shape)))


@pytest.mark.parametrize("shape", GOOD)
def test_broadcastable_weights_pass_both_checks(shape):
    weights = np.asarray(np.random.RandomState(0).rand(*shape), np.float32)
    assert _numpy_rule(shape, VALUES.shape)
    static = weights_broadcast.broadcast_weights(weights, VALUES)
    fed = tf.placeholder(tf.float32)
    dynamic = weights_broadcast.broadcast_weights(fed, VALUES)
    expected = weights * np.ones_like(VALUES)
    got_static, got_dynamic = run([static, dynamic], {fed: weights})
    np.testing.assert_array_equal(got_static, expected)
    np.testing.assert_array_equal(got_dynamic, expected)


@pytest.mark.parametrize("shape", BAD)
def test_unbroadcastable_weights_fail_statically_and_at_run_time(shape):
    weights = np.ones(shape, np.float32)
    assert not _numpy_rule(shape, VALUES.shape)
    with pytest.raises(ValueError, match="weights can not be broadcast to values"):
        weights_broadcast.assert_broadcastable(weights, VALUES)
    fed = tf.placeholder(tf.float32)
    check = weights_broadcast.assert_broadcastable(fed, VALUES)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="weights can not be broadcast to values"):
        run(check, {fed: weights})


def test_partially_known_shapes_are_checked_where_known():
    with pytest.raises(ValueError, match="weights.rank=2"):
        weights_broadcast.assert_broadcastable(tf.placeholder(tf.float32, [None, 2]), VALUES)
    fed = tf.placeholder(tf.float32, [None, 2, 1])
    check = weights_broadcast.assert_broadcastable(fed, VALUES)
    run(check, {fed: np.ones([3, 2, 1])})
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(check, {fed: np.ones([2, 2, 1])})
