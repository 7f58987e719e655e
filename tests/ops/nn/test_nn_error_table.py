"""nn error table: TF's error class, the phase it is raised in (graph construction or run
time), and the facts its message carries, for bad convolution, pooling, bias, softmax, top-k
and dropout inputs (recorded from TensorFlow in graph mode).

Each row: (id, builder -> (fetch, feed), phase "build" | "run", error class, regex)."""

import numpy as np
import pytest
from op_helpers import check_error_row, graph, run  # noqa: F401

import tensorflux as tf
from tensorflux.ops.nn import core as nn_core

X = np.ones([1, 4, 4, 3], np.float32)
F = np.ones([2, 2, 3, 2], np.float32)
Y = np.ones([1, 2, 2, 2], np.float32)
BAD = tf.errors.InvalidArgumentError
UNIMPLEMENTED = tf.errors.UnimplementedError


def _fed(fn, value, dtype=tf.float32):
    p = tf.placeholder(dtype)
    return fn(p), {p: value}


def _const(fn):
    return lambda: (fn(), None)


ERROR_TABLE = [
    ("conv2d channel mismatch",
     _const(lambda: tf.nn.conv2d(X, np.ones([2, 2, 4, 2], np.float32), [1, 1, 1, 1], "SAME")),
     "build", ValueError, r"Depth of input \(3\) is not a multiple of input depth of filter \(4\)"),
    ("conv2d channel mismatch fed",
     lambda: _fed(lambda p: tf.nn.conv2d(p, F, [1, 1, 1, 1], "SAME"), np.ones([1, 4, 4, 5])),
     "run", BAD, r"Conv2D.*5.*3"),
    ("conv2d strides length", _const(lambda: tf.nn.conv2d(X, F, [1, 1, 1], "SAME")),
     "build", ValueError, "strides should be of length 1, 2 or 4"),
    ("conv2d strides on batch", _const(lambda: tf.nn.conv2d(X, F, [2, 1, 1, 1], "SAME")),
     "run", UNIMPLEMENTED, "does not yet support strides in the batch and depth dimensions"),
    ("conv2d strides on depth", _const(lambda: tf.nn.conv2d(X, F, [1, 1, 1, 2], "SAME")),
     "run", UNIMPLEMENTED, "does not yet support strides in the batch and depth dimensions"),
    ("conv2d dilations on batch",
     _const(lambda: tf.nn.conv2d(X, F, [1, 1, 1, 1], "SAME", dilations=[2, 1, 1, 1])),
     "run", UNIMPLEMENTED, "does not yet support dilations in the batch and depth dimensions"),
    ("conv2d bad padding", _const(lambda: tf.nn.conv2d(X, F, [1, 1, 1, 1], "FULL")),
     "build", ValueError, 'padding.*.FULL.*"SAME", "VALID", "EXPLICIT"'),
    ("conv2d filter rank",
     _const(lambda: tf.nn.conv2d(X, np.ones([2, 2, 3], np.float32), [1, 1, 1, 1], "SAME")),
     "build", ValueError, "Conv2D.*rank 4"),
    ("conv2d filter larger than input VALID",
     _const(lambda: tf.nn.conv2d(X, np.ones([6, 6, 3, 2], np.float32), [1, 1, 1, 1], "VALID")),
     "build", ValueError, "Negative dimension size caused by subtracting 6 from 4"),
    ("conv2d filter larger than input VALID fed",
     lambda: _fed(lambda p: tf.nn.conv2d(p, np.ones([6, 6, 3, 2], np.float32), [1, 1, 1, 1],
                                         "VALID"), X),
     "run", BAD, "subtracting 6 from 4"),
    ("max_pool ksize length", _const(lambda: tf.nn.max_pool(X, [1, 2, 2], [1, 1, 1, 1], "SAME")),
     "build", ValueError, "ksize should be of length 1, 2 or 4"),
    ("max_pool strides length",
     _const(lambda: tf.nn.max_pool(X, [1, 2, 2, 1], [1, 1, 1], "SAME")),
     "build", ValueError, "strides should be of length 1, 2 or 4"),
    ("max_pool window larger than input VALID",
     _const(lambda: tf.nn.max_pool(X, [1, 6, 6, 1], [1, 1, 1, 1], "VALID")),
     "build", ValueError, "MaxPool.*Negative dimension size caused by subtracting 6 from 4"),
    ("max_pool window larger than input VALID fed",
     lambda: _fed(lambda p: tf.nn.max_pool(p, [1, 6, 6, 1], [1, 1, 1, 1], "VALID"), X),
     "run", BAD, "subtracting 6 from 4"),
    ("max_pool ksize on batch",
     _const(lambda: tf.nn.max_pool(X, [2, 2, 2, 1], [1, 1, 1, 1], "SAME")),
     "run", UNIMPLEMENTED, "Pooling is not yet supported on the batch dimension"),
    ("max_pool strides on batch",
     _const(lambda: tf.nn.max_pool(X, [1, 2, 2, 1], [2, 1, 1, 1], "SAME")),
     "run", UNIMPLEMENTED, "Pooling is not yet supported on the batch dimension"),
    ("avg_pool ksize length", _const(lambda: tf.nn.avg_pool(X, [1, 2, 2], [1, 1, 1, 1], "SAME")),
     "build", ValueError, "ksize should be of length 1, 2 or 4"),
    ("avg_pool window larger than input VALID",
     _const(lambda: tf.nn.avg_pool(X, [1, 6, 6, 1], [1, 1, 1, 1], "VALID")),
     "build", ValueError, "AvgPool.*Negative dimension size caused by subtracting 6 from 4"),
    ("avg_pool ksize on batch",
     _const(lambda: tf.nn.avg_pool(X, [2, 2, 2, 1], [1, 1, 1, 1], "SAME")),
     "run", UNIMPLEMENTED, "Pooling is not yet supported on the batch dimension"),
    ("avg_pool ksize on depth",
     _const(lambda: tf.nn.avg_pool(X, [1, 2, 2, 3], [1, 1, 1, 1], "SAME")),
     "run", UNIMPLEMENTED, "AvgPool.*depth"),
    ("bias_add size mismatch",
     _const(lambda: tf.nn.bias_add(np.ones([2, 3], np.float32), np.ones([4], np.float32))),
     "build", ValueError, "BiasAdd.*Dimensions must be equal, but are 3 and 4"),
    ("bias_add size mismatch fed",
     lambda: _fed(lambda p: tf.nn.bias_add(p, np.ones([4], np.float32)), np.ones([2, 3])),
     "run", BAD, r"Must provide as many biases as .* dimension of the input tensor: "
                 r"\[4\] vs. \[2, 3\]"),
    ("bias_add rank 1",
     _const(lambda: tf.nn.bias_add(np.ones([3], np.float32), np.ones([3], np.float32))),
     "build", ValueError, "BiasAdd.*rank at least 2"),
    ("bias_add rank 1 fed",
     lambda: _fed(lambda p: tf.nn.bias_add(p, np.ones([3], np.float32)), np.ones([3])),
     "run", BAD, r"BiasAdd: Input tensor must be at least 2D: \[3\]"),
    ("bias_add bias rank 2",
     _const(lambda: tf.nn.bias_add(np.ones([2, 3], np.float32), np.ones([1, 3], np.float32))),
     "build", ValueError, "BiasAdd.*must have rank 1"),
    ("softmax scalar", _const(lambda: tf.nn.softmax(tf.constant(1.0))),
     "build", ValueError, "Softmax.*rank at least 1"),
    ("softmax scalar fed", lambda: _fed(tf.nn.softmax, np.float32(1.0)),
     "run", BAD, r"Softmax: logits must have >= 1 dimension, got \[\]"),
    ("softmax axis tensor beyond the rank",
     _const(lambda: tf.nn.softmax([1.0, 2.0], axis=tf.placeholder_with_default(7, []))),
     "run", BAD, "perm"),
    ("log_softmax scalar", _const(lambda: tf.nn.log_softmax(tf.constant(1.0))),
     "build", ValueError, "LogSoftmax.*rank at least 1"),
    ("log_softmax scalar fed", lambda: _fed(tf.nn.log_softmax, np.float32(1.0)),
     "run", BAD, r"LogSoftmax: logits must have >= 1 dimension, got \[\]"),
    ("raw xent rank 3",
     _const(lambda: nn_core.SoftmaxCrossEntropyWithLogits(np.ones([2, 1, 4], np.float32),
                                                          np.ones([2, 1, 4], np.float32))),
     "build", ValueError, "SoftmaxCrossEntropyWithLogits.*rank 2, but is rank 3"),
    ("raw sparse xent scalar labels fed",
     lambda: _fed(lambda p: nn_core.SparseSoftmaxCrossEntropyWithLogits(
         np.ones([1, 3], np.float32), p), np.int32(0), tf.int32),
     "run", BAD, r"labels must be 1-D, but got shape \[\]"),
    ("raw sparse xent batch mismatch fed",
     lambda: _fed(lambda p: nn_core.SparseSoftmaxCrossEntropyWithLogits(
         np.ones([2, 3], np.float32), p), np.array([0, 1, 2]), tf.int32),
     "run", BAD, r"must have the same first dimension, got logits shape \[2, 3\] and labels "
                 r"shape \[3\]"),
    ("sparse xent label out of range",
     _const(lambda: tf.nn.sparse_softmax_cross_entropy_with_logits(
         labels=tf.constant([0, 5]), logits=np.ones([2, 3], np.float32))),
     "run", BAD, r"Received a label value of 5 which is outside the valid range of \[0, 3\)"),
    ("sparse xent negative label fed",
     lambda: _fed(lambda p: tf.nn.sparse_softmax_cross_entropy_with_logits(
         labels=p, logits=np.ones([2, 3], np.float32)), np.array([0, -1]), tf.int32),
     "run", BAD, r"Received a label value of -1 which is outside the valid range of \[0, 3\)"),
    ("sparse xent labels rank",
     _const(lambda: tf.nn.sparse_softmax_cross_entropy_with_logits(
         labels=tf.constant([[0, 1]]), logits=np.ones([2, 3], np.float32))),
     "build", ValueError, "labels.shape.rank` must equal `logits.shape.rank - 1"),
    ("sparse xent batch mismatch",
     _const(lambda: tf.nn.sparse_softmax_cross_entropy_with_logits(
         labels=tf.constant([0, 1, 2]), logits=np.ones([2, 3], np.float32))),
     "build", ValueError, r"\(3,\).*\(2,\)"),
    ("in_top_k targets rank",
     _const(lambda: tf.nn.in_top_k(np.ones([2, 3], np.float32), tf.constant([[0, 1]]), 1)),
     "build", ValueError, "InTopKV2.*must have rank 1"),
    ("in_top_k predictions rank",
     _const(lambda: tf.nn.in_top_k(np.ones([3], np.float32), tf.constant([0]), 1)),
     "build", ValueError, "InTopKV2.*must have rank 2"),
    ("in_top_k batch mismatch",
     _const(lambda: tf.nn.in_top_k(np.ones([2, 3], np.float32), tf.constant([0, 1, 2]), 1)),
     "build", ValueError, r"InTopKV2.*\(3,\).*\(2,\)"),
    ("top_k k larger than last dim", _const(lambda: tf.nn.top_k(np.ones([2, 3], np.float32), 4)),
     "build", ValueError, "TopKV2.*last dimension >= k = 4 but is 3"),
    ("top_k k larger than last dim fed",
     lambda: _fed(lambda k: tf.nn.top_k(np.ones([2, 3], np.float32), k)[0], 4, tf.int32),
     "run", BAD, "k = 4 but is 3"),
    ("top_k negative k", _const(lambda: tf.nn.top_k(np.ones([2, 3], np.float32), -1)),
     "build", ValueError, "TopKV2.*-1"),
    ("top_k negative k fed",
     lambda: _fed(lambda k: tf.nn.top_k(np.ones([2, 3], np.float32), k)[0], -1, tf.int32),
     "run", BAD, "Need k >= 0, got -1"),
    ("top_k scalar", _const(lambda: tf.nn.top_k(tf.constant(1.0), 1)),
     "build", ValueError, "TopKV2.*rank at least 1"),
    ("l2_normalize axis out of range",
     _const(lambda: tf.nn.l2_normalize(np.ones([2, 3], np.float32), axis=2)),
     "build", ValueError, "Invalid reduction dimension 2 for input with 2 dimensions"),
    ("l2_normalize int input", _const(lambda: tf.nn.l2_normalize(tf.constant([1, 2]), axis=0)),
     "build", TypeError, "Maximum.*int32.*1e-12"),
    ("dropout rate 1", _const(lambda: tf.nn.dropout(np.ones([2], np.float32), rate=1.0)),
     "build", ValueError, r"range \[0, 1\). Received: rate=1.0"),
    ("dropout negative rate", _const(lambda: tf.nn.dropout(np.ones([2], np.float32), rate=-0.1)),
     "build", ValueError, r"range \[0, 1\). Received: rate=-0.1"),
    ("dropout keep_prob 0",
     _const(lambda: tf.nn.dropout(np.ones([2], np.float32), keep_prob=0.0)),
     "build", ValueError, "Received: rate=1.0"),
    ("dropout int input", _const(lambda: tf.nn.dropout(tf.constant([1, 2]), rate=0.5)),
     "build", ValueError, "must be a floating point tensor"),
    ("conv2d_transpose output depth",
     _const(lambda: tf.nn.conv2d_transpose(Y, np.ones([2, 2, 3, 2], np.float32), [1, 4, 4, 5],
                                           [1, 2, 2, 1], "SAME")),
     "run", BAD, r"5.*3"),
    ("conv2d_transpose output spatial",
     _const(lambda: tf.nn.conv2d_transpose(Y, np.ones([2, 2, 3, 2], np.float32), [1, 7, 7, 3],
                                           [1, 2, 2, 1], "SAME")),
     "run", BAD, r"Conv2DBackpropInput: out_backprop has shape \[1, 2, 2, 2\].*\[1, 7, 7, 3\]"),
    ("conv2d_transpose input channels",
     _const(lambda: tf.nn.conv2d_transpose(np.ones([1, 2, 2, 5], np.float32),
                                           np.ones([2, 2, 3, 2], np.float32), [1, 4, 4, 3],
                                           [1, 2, 2, 1], "SAME")),
     "build", ValueError, "5 != 2"),
    ("conv2d_transpose output_shape length",
     _const(lambda: tf.nn.conv2d_transpose(Y, np.ones([2, 2, 3, 2], np.float32), [1, 4, 4],
                                           [1, 2, 2, 1], "SAME")),
     "build", ValueError, "Conv2DBackpropInput.*4"),
    ("depthwise channel mismatch",
     _const(lambda: tf.nn.depthwise_conv2d(X, np.ones([2, 2, 4, 1], np.float32), [1, 1, 1, 1],
                                           "SAME")),
     "build", ValueError, "DepthwiseConv2dNative.*3 vs 4"),
]


@pytest.mark.parametrize("build,phase,error,words", [r[1:] for r in ERROR_TABLE],
                         ids=[r[0] for r in ERROR_TABLE])
def test_nn_error_table(build, phase, error, words):
    check_error_row(build, phase, error, words)


def test_non_spatial_windows_keep_spatial_static_shapes():
    # As TF: construction succeeds with the spatial sizes; the kernels refuse at run time.
    assert tf.nn.conv2d(X, F, [2, 1, 1, 1], "SAME").shape.as_list() == [1, 4, 4, 2]
    assert tf.nn.max_pool(X, [2, 2, 2, 1], [1, 1, 1, 1], "SAME").shape.as_list() == [1, 4, 4, 3]
    assert tf.nn.avg_pool(X, [1, 2, 2, 3], [1, 2, 2, 1], "VALID").shape.as_list() == [1, 2, 2, 3]


def test_valid_inputs_still_compute():
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    got = run([tf.nn.bias_add(x, np.arange(6, dtype=np.float32)), tf.nn.softmax(x)])
    np.testing.assert_array_equal(got[0], x + np.arange(6))
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(got[1], e / e.sum(1, keepdims=True), rtol=1e-6)
    pooled = run(tf.nn.max_pool(np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1),
                                [1, 2, 2, 1], [1, 2, 2, 1], "VALID"))
    np.testing.assert_array_equal(pooled.reshape(2, 2), [[5, 7], [13, 15]])
