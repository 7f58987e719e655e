"""_FusedConv2D and _FusedMatMul (ops/fused_ops.py): bit-identical to the unfused chains, and
the runtime rewrite that makes them (rule 6 of runtime/rewrites.py)."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.internal import fused as fused_ops
from tensorflux.runtime import rewrites, subgraph

RNG = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def unfused(fetches, feed=None):
    off = tf.OptimizerOptions(opt_level=-1)
    with tf.Session(config=tf.ConfigProto(graph_options=tf.GraphOptions(
            optimizer_options=off))) as sess:
        return sess.run(fetches, feed)


def step_ops(fetches, feeds=()):
    nodes, points, _ = subgraph.build_step_graph(tf.get_default_graph(), list(feeds),
                                                 list(fetches), [])
    return {n.name: n.op for n in rewrites.optimize(nodes, points)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("activation", [None, "Relu", "Relu6"])
@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_fused_conv2d_is_bit_identical(dtype, activation, fmt):
    x = (RNG.standard_normal((3, 6, 5, 4)) * 4).astype(dtype)
    if fmt == "NCHW":
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    w = RNG.standard_normal((3, 3, 4, 5)).astype(dtype)
    b = RNG.standard_normal(5).astype(dtype)
    strides = [1, 1, 2, 1] if fmt == "NHWC" else [1, 1, 1, 2]
    images = tf.placeholder(dtype, x.shape)
    y = tf.nn.bias_add(tf.nn.conv2d(images, w, strides, "SAME", data_format=fmt), b,
                       data_format=fmt, name="biased")
    if activation:
        y = getattr(tf.nn, activation.lower())(y, name="act")
    fused = fused_ops.FusedConv2D(images, w, [b], strides=strides, padding="SAME",
                                  data_format=fmt, num_args=1,
                                  fused_ops=["BiasAdd"] + ([activation] if activation else []))
    assert fused.shape.as_list() == y.shape.as_list()
    feed = {images: x}
    expect = unfused(y, feed)
    np.testing.assert_array_equal(run(fused, feed), expect)
    np.testing.assert_array_equal(run(y, feed), expect)
    assert step_ops([y], [images])[y.op.name] == "_FusedConv2D"


@pytest.mark.parametrize("transpose_a,transpose_b", [(False, False), (True, False),
                                                     (False, True)])
@pytest.mark.parametrize("activation", [None, "Relu"])
def test_fused_matmul_is_bit_identical(transpose_a, transpose_b, activation):
    a_value = RNG.standard_normal((4, 3) if transpose_a else (3, 4)).astype(np.float32)
    a = tf.placeholder(tf.float32, a_value.shape)
    b = RNG.standard_normal((6, 4) if transpose_b else (4, 6)).astype(np.float32)
    bias = RNG.standard_normal(6).astype(np.float32)
    y = tf.nn.bias_add(tf.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b), bias)
    if activation:
        y = tf.nn.relu(y)
    feed = {a: a_value}
    expect = unfused(y, feed)
    np.testing.assert_array_equal(run(y, feed), expect)
    assert step_ops([y], [a])[y.op.name] == "_FusedMatMul"
    fused = fused_ops.FusedMatMul(a, b, [bias], transpose_a=transpose_a,
                                  transpose_b=transpose_b, num_args=1,
                                  fused_ops=["BiasAdd"] + ([activation] if activation else []))
    np.testing.assert_array_equal(run(fused, feed), expect)
    assert fused.shape.as_list() == [3, 6]


def test_dense_layer_trains_the_same_fused_and_unfused():
    tf.set_random_seed(1)
    x = tf.placeholder(tf.float32, [8, 5])
    h = tf.layers.dense(x, 7, activation=tf.nn.relu)
    loss = tf.reduce_sum(tf.layers.dense(h, 2) ** 2)
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    feed = {x: RNG.standard_normal((8, 5)).astype(np.float32)}
    init = tf.global_variables_initializer()
    results = []
    for options in (None, tf.OptimizerOptions(opt_level=-1)):
        config = tf.ConfigProto(graph_options=tf.GraphOptions(optimizer_options=options)) \
            if options else None
        with tf.Session(config=config) as sess:
            sess.run(init)
            for _ in range(3):
                sess.run(train, feed)
            results.append(sess.run([loss] + tf.trainable_variables(), feed))
    for fused, plain in zip(*results):
        np.testing.assert_array_equal(fused, plain)


def test_chains_with_other_readers_are_not_fused():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    w = tf.constant(RNG.standard_normal((3, 4)).astype(np.float32))
    b = tf.constant(np.ones(4, np.float32))
    product = tf.matmul(x, w, name="product")
    biased = tf.nn.bias_add(product, b, name="biased")
    relu = tf.nn.relu(biased, name="relu")
    also = tf.identity(product, name="also")  # a second reader of the product
    ops = step_ops([relu, also], [x])
    assert ops["product"] == "MatMul" and ops["relu"] == "Relu"
    ops = step_ops([relu, biased], [x])  # the fetched BiasAdd stays; the product fuses into it
    assert ops["biased"] == "_FusedMatMul" and ops["relu"] == "Relu" and "product" not in ops
    k = tf.placeholder(tf.int32, [1, 2], name="k")
    ints = tf.nn.bias_add(tf.matmul(k, tf.constant([[3], [4]])), tf.constant([5]), name="ints")
    assert step_ops([ints], [k])["ints"] == "BiasAdd"


def test_errors_name_the_op():
    x = np.ones((1, 3, 3, 2), np.float32)
    w = np.ones((2, 2, 2, 3), np.float32)
    bad_bias = fused_ops.FusedConv2D(x, w, [np.ones(4, np.float32)], strides=[1, 1, 1, 1],
                                     padding="VALID", fused_ops=["BiasAdd"], num_args=1)
    with pytest.raises(errors.InvalidArgumentError, match="_FusedConv2D.*bias"):
        run(bad_bias)
    with pytest.raises(ValueError, match="fused_ops"):
        fused_ops.FusedMatMul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32),
                              [np.ones(2, np.float32)], num_args=1, fused_ops=["Relu"])
