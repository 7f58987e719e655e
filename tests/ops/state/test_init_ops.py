"""Initializers: values, ranges and moments against NumPy, fans, configs and errors."""

import math

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.ops.state import initializers as init_ops


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _value(init, shape, dtype=tf.float32):
    with tf.Session() as sess:
        return sess.run(init(shape, dtype=dtype))


def test_zeros_ones_and_dtypes(graph):
    assert _value(tf.zeros_initializer(), [2, 3]).tolist() == [[0.0] * 3] * 2
    ones = _value(tf.ones_initializer(dtype=tf.int64), [3], dtype=None)
    assert ones.dtype == np.int64 and ones.tolist() == [1, 1, 1]
    big = _value(tf.zeros_initializer(), [40, 40])  # built with Fill, not a big constant
    assert big.shape == (40, 40) and not big.any()


def test_constant_initializer(graph):
    np.testing.assert_array_equal(_value(tf.constant_initializer(2.5), [2, 2]),
                                  np.full((2, 2), 2.5))
    np.testing.assert_array_equal(_value(tf.constant_initializer([1, 2, 3]), [2, 2]),
                                  [[1, 2], [3, 3]])
    np.testing.assert_array_equal(_value(tf.constant_initializer(np.eye(2)), [2, 2]), np.eye(2))
    with pytest.raises(TypeError, match="Expected Tensor's shape"):
        tf.constant_initializer([1, 2, 3], verify_shape=True)([2, 2])
    with pytest.raises(ValueError, match="Too many elements"):
        tf.constant_initializer([1, 2, 3])([2])
    with pytest.raises(TypeError, match="Invalid type for initial value"):
        tf.constant_initializer({"a": 1})


def test_random_uniform_and_normal(graph):
    u = _value(tf.random_uniform_initializer(-3.0, 5.0, seed=1), [20000])
    assert u.min() >= -3.0 and u.max() < 5.0 and abs(u.mean() - 1.0) < 0.1
    n = _value(tf.random_normal_initializer(2.0, 0.5, seed=2), [20000], tf.float64)
    assert n.dtype == np.float64
    assert abs(n.mean() - 2.0) < 0.02 and abs(n.std() - 0.5) < 0.02
    t = _value(tf.truncated_normal_initializer(0.0, 1.0, seed=3), [20000])
    assert np.abs(t).max() <= 2.0 and abs(t.std() - 0.87962566) < 0.03


def test_seeded_initializers_repeat(graph):
    init = tf.random_normal_initializer(seed=7)
    a = init([5])
    b = init([5])
    with tf.Session() as sess:
        x, y = sess.run([a, b])
    np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("shape,fans", [([], (1, 1)), ([7], (7, 7)), ([30, 20], (30, 20)),
                                        ([3, 3, 16, 32], (144, 288))])
def test_compute_fans(shape, fans):
    assert init_ops._compute_fans(shape) == fans


@pytest.mark.parametrize("mode,fan", [("fan_in", 144), ("fan_out", 288), ("fan_avg", 216)])
def test_variance_scaling_uniform_limits_use_conv_fans(graph, mode, fan):
    init = tf.variance_scaling_initializer(2.0, mode, "uniform", seed=4)
    value = _value(init, [3, 3, 16, 32])
    limit = math.sqrt(3.0 * 2.0 / fan)
    assert np.abs(value).max() <= limit and np.abs(value).max() > 0.99 * limit
    assert abs(value.var() - 2.0 / fan) < 0.08 * 2.0 / fan


def test_variance_scaling_normal_variances(graph):
    shape = [200, 100]
    trunc = _value(tf.variance_scaling_initializer(1.0, "fan_in", seed=5), shape)
    assert abs(trunc.var() - 1.0 / 200) < 0.05 / 200
    assert np.abs(trunc).max() <= 2 * math.sqrt(1.0 / 200) / 0.87962566103423978 + 1e-6
    plain = _value(tf.variance_scaling_initializer(1.0, "fan_out", "untruncated_normal",
                                                   seed=6), shape)
    assert abs(plain.var() - 1.0 / 100) < 0.05 / 100


def test_glorot_and_unit_scaling(graph):
    g = _value(tf.glorot_uniform_initializer(seed=1), [50, 30])
    limit = math.sqrt(6.0 / 80)
    assert np.abs(g).max() <= limit and np.abs(g).max() > 0.98 * limit
    gn = _value(tf.glorot_normal_initializer(seed=2), [300, 100])
    assert abs(gn.var() - 2.0 / 400) < 0.05 * 2.0 / 400
    uu = _value(tf.uniform_unit_scaling_initializer(2.0, seed=3), [12, 5])
    assert np.abs(uu).max() <= math.sqrt(3.0 / 12) * 2.0


def test_variance_scaling_argument_errors():
    with pytest.raises(ValueError, match="scale"):
        tf.variance_scaling_initializer(0.0)
    with pytest.raises(ValueError, match="mode"):
        tf.variance_scaling_initializer(mode="fan_sum")
    with pytest.raises(ValueError, match="distribution"):
        tf.variance_scaling_initializer(distribution="cauchy")
    with pytest.raises(ValueError, match="floating point"):
        tf.random_normal_initializer(dtype=tf.int32)


def test_identity_initializer(graph):
    np.testing.assert_array_equal(_value(init_ops.identity_initializer(gain=2.0), [2, 3]),
                                  2.0 * np.eye(2, 3))
    with pytest.raises(ValueError, match="2D"):
        init_ops.identity_initializer()([2, 2, 2])


@pytest.mark.parametrize("shape", [[6, 4], [4, 6], [2, 3, 5]])
def test_orthogonal_initializer(graph, shape):
    value = _value(tf.orthogonal_initializer(gain=1.5, seed=3), shape, tf.float64)
    flat = value.reshape(-1, shape[-1])
    small = min(flat.shape)
    gram = flat.T @ flat if flat.shape[0] >= flat.shape[1] else flat @ flat.T
    np.testing.assert_allclose(gram, 2.25 * np.eye(small), atol=1e-9)


def test_orthogonal_needs_a_matrix(graph):
    with pytest.raises(ValueError, match="at least two-dimensional"):
        tf.orthogonal_initializer()([3])


def test_configs_round_trip():
    for init in (tf.zeros_initializer(), tf.constant_initializer(3.0),
                 tf.random_uniform_initializer(-1, 1, seed=2),
                 tf.truncated_normal_initializer(0.5, 2.0, seed=1),
                 tf.variance_scaling_initializer(2.0, "fan_out", "uniform", seed=9),
                 tf.glorot_uniform_initializer(seed=4), tf.orthogonal_initializer(0.5)):
        config = init.get_config()
        again = type(init).from_config(config)
        assert again.get_config() == config


def test_get_variable_with_initializer_classes(graph):
    v = tf.get_variable("v", [2, 2], initializer=tf.ones_initializer)
    c = tf.get_variable("c", [3], initializer=tf.constant_initializer([4.0, 5.0, 6.0]))
    h = tf.get_variable("h", [4, 4], initializer=init_ops.he_uniform(seed=1))
    assert c.initial_value.op.name.startswith("c/Initializer/")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(v), np.ones((2, 2)))
        np.testing.assert_array_equal(sess.run(c), [4.0, 5.0, 6.0])
        assert np.abs(sess.run(h)).max() <= math.sqrt(6.0 / 4)


def test_initializers_namespace(graph):
    assert tf.initializers.zeros is tf.zeros_initializer
    assert isinstance(tf.initializers.he_normal(), tf.variance_scaling_initializer)
    v = tf.Variable(1.0, name="v")
    with tf.Session() as sess:
        sess.run(tf.initializers.global_variables())
        assert sess.run(v) == 1.0
        sess.run(tf.initializers.variables([v]))


def test_constant_initializer_with_too_many_values_raises_value_error_in_get_variable(graph):
    init = tf.constant_initializer(np.arange(8).reshape(2, 4), dtype=tf.int32)
    with pytest.raises(ValueError, match="Needed at most 6, but received 8"):
        tf.get_variable("too_many", shape=[2, 3], initializer=init)
