"""tensordot with shapes, ranks or axes known only at run time, against np.tensordot, and its
argument checks (TF's error classes: ValueError, IndexError, InvalidArgumentError)."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf

RNG = np.random.RandomState(11)
A = RNG.randn(2, 3, 4)
B = RNG.randn(4, 3, 5)


@pytest.mark.parametrize("axes", [1, 0, [[1, 2], [1, 0]], [[2], [0]], ([-1], [0])])
def test_unknown_ranks_and_fed_axes(axes):
    pa, pb = tf.placeholder(tf.float64), tf.placeholder(tf.float64)
    expected = np.tensordot(A, B, axes)
    got = run(tf.tensordot(pa, pb, axes), {pa: A, pb: B})
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    if not isinstance(axes, int):
        fed = tf.placeholder(tf.int32)
        out = tf.tensordot(pa, pb, fed)
        np.testing.assert_allclose(run(out, {pa: A, pb: B, fed: np.array(axes)}), expected,
                                   rtol=1e-12)


def test_partially_known_shapes_keep_static_free_dims():
    pa = tf.placeholder(tf.float32, [None, 4])
    pb = tf.placeholder(tf.float32, [4, None])
    out = tf.tensordot(pa, pb, [[1], [0]])
    assert out.shape.as_list() == [None, None]
    pb2 = tf.placeholder(tf.float32, [4, 6])
    assert tf.tensordot(pa, pb2, 1).shape.as_list() == [None, 6]
    assert tf.tensordot(tf.placeholder(tf.float32), pb2, 1).shape.ndims is None


def test_argument_errors():
    m = np.ones((2, 2), np.float32)
    for axes in (-1, 3, [1], [[1]], [[1], [0, 1]]):
        with pytest.raises(ValueError):
            tf.tensordot(m, m, axes)
    with pytest.raises(IndexError):
        tf.tensordot(m, m, [[0], [7]])
    with pytest.raises(ValueError, match="contracted dimensions differ"):
        tf.tensordot(np.ones((2, 3)), np.ones((2, 3)), [[1], [0]])
    pa, pb, fed = tf.placeholder(tf.float32), tf.placeholder(tf.float32), tf.placeholder(tf.int32)
    out = tf.tensordot(pa, pb, fed)
    for axes in ([[0], [7]], [[0, 1]], [0, 1]):
        with pytest.raises(tf.errors.InvalidArgumentError):
            run(out, {pa: m, pb: m, fed: axes})


def test_matmul_size_mismatch_when_run_uses_tf_words():
    pa, pb = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    for transpose_b in (False, True):
        out = tf.matmul(pa, pb, transpose_b=transpose_b)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Matrix size-incompatible: In\[0\]: \[2, 2\], In\[1\]"):
            run(out, {pa: np.ones((2, 2)), pb: np.ones((3, 3))})
