"""MatMul, BatchMatMul, BatchMatMulV2 and tensordot: rows against np.matmul / np.tensordot,
static shapes, errors, hypothesis over broadcast batch shapes, and gradient cases."""

import collections

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.math import matrix_product as matmul_ops

Row = collections.namedtuple("Row", "op build expected")
RNG = np.random.RandomState(7)
A = RNG.rand(2, 3).astype(np.float32)
B = RNG.rand(3, 4).astype(np.float32)
BA = RNG.rand(5, 2, 3)
BB = RNG.rand(5, 3, 4)
CA = (RNG.rand(2, 3) + 1j * RNG.rand(2, 3)).astype(np.complex64)
CB = (RNG.rand(2, 4) + 1j * RNG.rand(2, 4)).astype(np.complex64)


def _fetch(outputs, feed=None):
    with tf.Session() as sess:
        return sess.run(outputs, feed)


def check(output, expected, feed=None):
    value = np.asarray(_fetch(output, feed))
    expected = np.asarray(expected)
    assert output.shape.is_compatible_with(value.shape), (output.shape, value.shape)
    assert value.dtype == output.dtype.as_numpy_dtype == expected.dtype
    assert value.shape == expected.shape
    np.testing.assert_allclose(value, expected, rtol=1e-5)


ROWS = [
    Row("MatMul", lambda: tf.matmul(A, B), A @ B),
    Row("MatMul", lambda: tf.matmul(A.T, B, transpose_a=True), A @ B),
    Row("MatMul", lambda: tf.matmul(A, B.T, transpose_b=True), A @ B),
    Row("MatMul", lambda: tf.matmul(A.T, B.T, transpose_a=True, transpose_b=True), A @ B),
    Row("MatMul", lambda: tf.matmul([[1, 2]], [[3], [4]]),
        np.array([[11]], np.int32)),
    Row("MatMul", lambda: tf.matmul(CA, CB, adjoint_a=True), np.conj(CA.T) @ CB),
    Row("BatchMatMulV2", lambda: tf.matmul(BA, BB), BA @ BB),
    Row("BatchMatMulV2", lambda: tf.matmul(np.ones([2, 1, 2, 3]), np.ones([3, 3, 4])),
        np.full([2, 3, 2, 4], 3.0)),
    Row("BatchMatMulV2", lambda: tf.matmul(BA, BB[0]), BA @ BB[0]),
    Row("BatchMatMulV2", lambda: tf.matmul(BA, np.swapaxes(BB, 1, 2), transpose_b=True),
        BA @ BB),
    Row("BatchMatMulV2", lambda: tf.matmul(tf.placeholder_with_default(A, None), B), A @ B),
    Row("BatchMatMul", lambda: matmul_ops.BatchMatMul(BA, BB), BA @ BB),
    Row("BatchMatMul", lambda: matmul_ops.BatchMatMul(np.swapaxes(BA, 1, 2), BB, adj_x=True),
        BA @ BB),
]

COVERED_OPS = {row.op for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.op}-{i}" for i, r in enumerate(ROWS)])
def test_row(row):
    with tf.Graph().as_default():
        out = row.build()
        assert out.op.type == row.op
        check(out, row.expected)


def test_op_choice_and_names():
    with tf.Graph().as_default():
        assert tf.matmul(A, B).op.name == "MatMul"
        assert tf.matmul(A, B, name="dense").op.name == "dense"
        assert tf.matmul(BA, BB).op.type == "BatchMatMulV2"
        assert tf.matmul(tf.constant(BA), tf.constant(BB)).shape.as_list() == [5, 2, 4]
        assert tf.matmul(np.ones([2, 1, 2, 3]), np.ones([3, 3, 4])).shape.as_list() == \
            [2, 3, 2, 4]


def test_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="MatMul 'MatMul'.*Dimensions must be equal"):
            tf.matmul(tf.ones([2, 3]), tf.ones([4, 5]))
        with pytest.raises(ValueError, match="Only one of transpose_a and adjoint_a"):
            tf.matmul(A, B, transpose_a=True, adjoint_a=True)
        with pytest.raises(ValueError, match="BatchMatMulV2"):
            tf.matmul(tf.ones([2, 2, 3]), tf.ones([3, 2, 4]))
        with pytest.raises(ValueError, match="rank"):
            matmul_ops.MatMul(tf.ones([3]), tf.ones([3, 4]))
        x = tf.placeholder(tf.float32)
        with pytest.raises(errors.InvalidArgumentError, match="size-incompatible"):
            _fetch(tf.matmul(x, tf.ones([3, 4])), {x: np.ones([2, 2], np.float32)})
        with pytest.raises(errors.InvalidArgumentError, match="rank >= 2"):
            _fetch(tf.matmul(x, tf.ones([3, 4])), {x: np.ones([3], np.float32)})


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_batch_broadcasting_matches_numpy(data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    m, k, n = data.draw(st.tuples(*[st.integers(1, 3)] * 3))
    x = RNG.rand(*shapes.input_shapes[0], m, k)
    y = RNG.rand(*shapes.input_shapes[1], k, n)
    adj_x, adj_y = data.draw(st.booleans()), data.draw(st.booleans())
    with tf.Graph().as_default():
        xs = np.swapaxes(x, -1, -2) if adj_x else x
        ys = np.swapaxes(y, -1, -2) if adj_y else y
        out = matmul_ops.BatchMatMulV2(xs, ys, adj_x=adj_x, adj_y=adj_y)
        value = _fetch(out)
        assert out.shape.as_list() == list(np.matmul(x, y).shape)
    np.testing.assert_allclose(value, np.matmul(x, y))


def test_tensordot():
    x = RNG.rand(2, 3, 4)
    y = RNG.rand(4, 3, 5)
    with tf.Graph().as_default():
        outs = [tf.tensordot(x, y, [[1, 2], [1, 0]]), tf.tensordot(x, y, 1),
                tf.tensordot(x[0], x[1], 0), tf.tensordot(x, y, [2, 0])]
        values = _fetch(outs)
        with pytest.raises(ValueError, match="differ"):
            tf.tensordot(x, y, [[0], [0]])
    np.testing.assert_allclose(values[0], np.tensordot(x, y, [[1, 2], [1, 0]]))
    np.testing.assert_allclose(values[1], np.tensordot(x, y, 1))
    np.testing.assert_allclose(values[2], np.tensordot(x[0], x[1], 0))
    np.testing.assert_allclose(values[3], np.tensordot(x, y, [2, 0]))
    assert outs[0].shape.as_list() == [2, 5]


def test_tensordot_with_unknown_dimensions():
    # Attention-style projection: batch and time are unknown until run time.
    x = RNG.rand(2, 3, 4)
    y = RNG.rand(4, 3, 5)
    with tf.Graph().as_default():
        px = tf.placeholder(tf.float64, [None, None, 4])
        py = tf.placeholder(tf.float64, [4, None, 5])
        outs = [tf.tensordot(px, y[:, 0], [[2], [0]]), tf.tensordot(px, py, [[1, 2], [1, 0]]),
                tf.tensordot(y[:, 0], px, [[0], [2]])]
        assert outs[0].shape.as_list() == [None, None, 5]
        assert outs[1].shape.as_list() == [None, 5]
        assert outs[2].shape.as_list() == [5, None, None]
        grad = tf.gradients(tf.reduce_sum(outs[1]), px)[0]
        with tf.Session() as sess:
            values = sess.run(outs + [grad], {px: x, py: y})
            empty = sess.run(outs[0], {px: np.zeros((0, 3, 4))})
        # an unknown rank is resolved at run time (tests/ops/math/test_tensordot_dynamic.py)
        assert tf.tensordot(tf.placeholder(tf.float64), y, 1).shape.ndims is None
    np.testing.assert_allclose(values[0], np.tensordot(x, y[:, 0], [[2], [0]]))
    np.testing.assert_allclose(values[1], np.tensordot(x, y, [[1, 2], [1, 0]]))
    np.testing.assert_allclose(values[2], np.tensordot(y[:, 0], x, [[0], [2]]))
    np.testing.assert_allclose(values[3], np.broadcast_to(y.sum(2).T, x.shape))
    assert empty.shape == (0, 3, 5)


# -- gradients ----------------------------------------------------------------------------------

def _case(fn, *shapes):
    def build(tf):
        rng = np.random.RandomState(8)
        xs = [tf.placeholder(tf.float64, s) for s in shapes]
        return fn(tf, *xs), xs, [rng.uniform(-1, 1, size=s) for s in shapes]

    return build


GRADIENT_CASES = [
    ("MatMul", _case(lambda tf, a, b: tf.matmul(a, b), [2, 3], [3, 4])),
    ("MatMul", _case(lambda tf, a, b: tf.matmul(a, b, transpose_a=True), [3, 2], [3, 4])),
    ("MatMul", _case(lambda tf, a, b: tf.matmul(a, b, transpose_b=True), [2, 3], [4, 3])),
    ("MatMul", _case(lambda tf, a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True),
                     [3, 2], [4, 3])),
    ("BatchMatMulV2", _case(lambda tf, a, b: tf.matmul(a, b), [2, 1, 2, 3], [3, 3, 2])),
    ("BatchMatMulV2", _case(lambda tf, a, b: tf.matmul(a, b, adjoint_a=True, adjoint_b=True),
                            [2, 3, 2], [4, 3])),
    ("BatchMatMulV2", _case(lambda tf, a, b: matmul_ops.BatchMatMulV2(a, b, adj_x=True),
                            [2, 3, 2], [2, 3, 2])),
    ("BatchMatMulV2", _case(lambda tf, a, b: matmul_ops.BatchMatMulV2(a, b, adj_y=True),
                            [2, 2, 3], [2, 2, 3])),
    ("BatchMatMul", _case(lambda tf, a, b: matmul_ops.BatchMatMul(a, b), [2, 2, 3], [2, 3, 2])),
    ("BatchMatMul", _case(lambda tf, a, b: matmul_ops.BatchMatMul(a, b, adj_x=True, adj_y=True),
                          [2, 3, 2], [2, 2, 3])),
]


def test_sparsity_hints_and_mixed_bfloat16_use_sparse_matmul():
    rng = np.random.RandomState(2)
    a = (rng.randint(-8, 8, size=(4, 3)) / 4.0).astype(np.float32)   # exact in bfloat16
    b = (rng.randint(-8, 8, size=(5, 3)) / 4.0).astype(np.float32)
    with tf.Graph().as_default():
        a16, b16 = tf.cast(a, tf.bfloat16), tf.cast(b, tf.bfloat16)
        hinted = tf.matmul(a, b, transpose_b=True, a_is_sparse=True)
        mixed = tf.matmul(a16, tf.constant(b), transpose_b=True)
        both16 = tf.matmul(a16, b16, transpose_b=True, b_is_sparse=True)
        plain = tf.matmul(a, b, transpose_b=True)
        assert hinted.op.type == "SparseMatMul" and mixed.op.type == "SparseMatMul"
        assert plain.op.type == "MatMul"
        assert (hinted.dtype, mixed.dtype, both16.dtype) == (tf.float32, tf.float32,
                                                             tf.bfloat16)
        (da,) = tf.gradients(tf.reduce_sum(mixed), [a16])
        with tf.Session() as sess:
            got = sess.run([hinted, mixed, tf.cast(both16, tf.float32), da])
    ref = a @ b.T
    for value in got[:3]:
        np.testing.assert_allclose(value, ref, rtol=0, atol=1e-6)
    np.testing.assert_allclose(np.asarray(got[3], np.float32),
                               np.tile(b.sum(axis=0), (4, 1)), rtol=1e-2)
