"""TF1 layer naming and scoping: unnamed layers get per-graph 1-based names; a class-built
layer enters a uniquified scope, the functional forms enter `name` itself."""

import numpy as np
import pytest

import tensorflux as tf


def _var_names():
    return sorted(v.op.name for v in tf.global_variables())


def test_unnamed_layers_count_per_class_from_one():
    with tf.Graph().as_default():
        x = tf.ones([2, 3])
        first, second = tf.layers.Dense(4), tf.layers.Dense(4)
        pool = tf.layers.MaxPooling1D(2, 2)
        first(x)
        second(x)
        assert (first.name, second.name, pool.name) == ("dense_1", "dense_2", "max_pooling1d_1")
        assert _var_names() == ["dense/bias", "dense/kernel", "dense_1/bias", "dense_1/kernel"]
    with tf.Graph().as_default():  # a new graph counts again
        assert tf.layers.Dense(1).name == "dense_1"


def test_class_layers_sharing_a_name_get_distinct_scopes():
    with tf.Graph().as_default():
        x = tf.ones([2, 3])
        a, b = tf.layers.Dense(2, name="fc"), tf.layers.Dense(2, name="fc")
        a(x)
        b(x)
        assert a.name == b.name == "fc"
        assert (a.scope_name, b.scope_name) == ("fc", "fc_1")
        assert _var_names() == ["fc/bias", "fc/kernel", "fc_1/bias", "fc_1/kernel"]


def test_functional_form_enters_its_name_and_reuses_it():
    with tf.Graph().as_default():
        x = tf.ones([2, 3])
        y1 = tf.layers.dense(x, 2, name="out")
        y2 = tf.layers.dense(x, 2, name="out", reuse=True)
        assert _var_names() == ["out/bias", "out/kernel"]
        with pytest.raises(ValueError, match="already exists"):
            tf.layers.dense(x, 2, name="out")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            a, b = sess.run([y1, y2])
        np.testing.assert_array_equal(a, b)


def test_dense_and_flatten_output_shapes():
    dense = tf.layers.Dense(5)
    assert dense.compute_output_shape((None, 7, 3)).as_list() == [None, 7, 5]
    for bad in ([], [4], None):
        with pytest.raises(ValueError):
            dense.compute_output_shape(tf.TensorShape(bad))
    flat = tf.layers.Flatten()
    assert flat.compute_output_shape((2, 3, 4)).as_list() == [2, 12]
    assert flat.compute_output_shape((None, 3, None)).as_list() == [None, None]


def test_constraints_reach_the_variables():
    with tf.Graph().as_default():
        def clip(v):
            return tf.clip_by_value(v, -0.5, 0.5)
        layer = tf.layers.Dense(3, kernel_constraint=clip, bias_constraint=clip)
        layer(tf.ones([1, 2]))
        assert layer.kernel_constraint is clip and layer.bias_constraint is clip
        assert layer.kernel.constraint is clip and layer.bias.constraint is clip


def test_dropout_noise_shape_with_unknown_entries_ties_the_masks():
    with tf.Graph().as_default():
        inputs = tf.ones([6, 4, 3])
        out = tf.layers.Dropout(0.5, noise_shape=[None, 1, None], seed=3)(inputs, training=True)
        with tf.Session() as sess:
            value = sess.run(out)
    for row in range(1, 4):  # one mask shared along axis 1
        np.testing.assert_array_equal(value[:, 0, :], value[:, row, :])
    assert set(np.unique(value)) <= {0.0, 2.0}


@pytest.mark.parametrize("kwargs, word", [
    ({"pool_size": None, "strides": 2}, "pool_size"),
    ({"pool_size": 2, "strides": None}, "strides"),
    ({"pool_size": (2, 2, 2), "strides": 2}, "pool_size"),
])
def test_pooling_arguments_checked(kwargs, word):
    with pytest.raises(ValueError, match=word):
        tf.layers.MaxPooling2D(**kwargs)
