"""Diagonal/band ops, eye, meshgrid, SpaceToDepth/DepthToSpace."""

import collections

import numpy as np
import pytest
from array_checks import _fetch, check  # noqa: F401 - shared table helpers
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import gradient_case as _case
from op_helpers import graph  # noqa: F401 - the autouse fixture

import tensorflux as tf
from tensorflux.framework import errors

Row = collections.namedtuple("Row", "op build expected")
A = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
B = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
IMG = np.arange(32, dtype=np.float32).reshape(2, 4, 2, 2)


def _band(x, lower, upper):
    i, j = np.indices(x.shape[-2:])
    keep = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
    return np.where(keep, x, 0)


def _space_to_depth(x, b):
    n, h, w, c = x.shape
    return x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5).reshape(
        n, h // b, w // b, b * b * c)


ROWS = [
    Row("MatrixBandPart", lambda: tf.matrix_band_part(A, 1, 0), _band(A, 1, 0)),
    Row("MatrixBandPart", lambda: tf.matrix_band_part(B, -1, 1), _band(B, -1, 1)),
    Row("MatrixBandPart", lambda: tf.matrix_band_part(A, tf.constant(0, tf.int32), -1),
        np.triu(A)),
    Row("Diag", lambda: tf.diag([1, 2, 3]), np.diag([1, 2, 3]).astype(np.int32)),
    Row("Diag", lambda: tf.diag(A[:2, :2]),
        np.einsum("ij,ik,jl->ijkl", A[:2, :2], np.eye(2), np.eye(2)).astype(np.float32)),
    Row("DiagPart", lambda: tf.diag_part(np.diag([4.0, 5.0])), np.array([4.0, 5.0])),
    Row("DiagPart", lambda: tf.diag_part(np.arange(16).reshape(2, 2, 2, 2)),
        np.array([[0, 5], [10, 15]])),
    Row("MatrixDiag", lambda: tf.matrix_diag(A[:2]),
        np.stack([np.diag(A[0]), np.diag(A[1])])),
    Row("MatrixDiag", lambda: tf.eye(3, dtype=tf.int32), np.eye(3, dtype=np.int32)),
    Row("MatrixDiagPart", lambda: tf.matrix_diag_part(B), np.stack([np.diag(b) for b in B])),
    Row("MatrixSetDiag", lambda: tf.matrix_set_diag(A, [0.0, -1.0, -2.0]),
        np.where(np.eye(3, 4, dtype=bool), [[0, -1, -2, 0]], A).astype(np.float32)),
    Row("MatrixSetDiag", lambda: tf.eye(2, 3, batch_shape=[2]),
        np.stack([np.eye(2, 3, dtype=np.float32)] * 2)),
    Row("SpaceToDepth", lambda: tf.space_to_depth(IMG, 2), _space_to_depth(IMG, 2)),
    Row("SpaceToDepth", lambda: tf.space_to_depth(IMG.transpose(0, 3, 1, 2), 2,
                                                  data_format="NCHW"),
        _space_to_depth(IMG, 2).transpose(0, 3, 1, 2)),
    Row("DepthToSpace", lambda: tf.depth_to_space(_space_to_depth(IMG, 2), 2), IMG),
    Row("DepthToSpace", lambda: tf.depth_to_space(
        _space_to_depth(IMG, 2).transpose(0, 3, 1, 2), 2, data_format="NCHW"),
        IMG.transpose(0, 3, 1, 2)),
]

COVERED_OPS = {row.op for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.op}-{i}" for i, r in enumerate(ROWS)])
def test_row(row):
    check(row.build(), row.expected)


def test_shapes_and_errors():
    p = tf.placeholder(tf.float32, [None, 3, 5])
    assert tf.matrix_diag_part(p).shape.as_list() == [None, 3]
    assert tf.matrix_diag(p).shape.as_list() == [None, 3, 5, 5]
    assert tf.space_to_depth(tf.placeholder(tf.float32, [None, 4, 6, 3]), 2).shape.as_list() == \
        [None, 2, 3, 12]
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.diag_part(A)
    with pytest.raises(ValueError, match="divisible"):
        tf.space_to_depth(tf.zeros([1, 3, 4, 1]), 2)
    with pytest.raises(ValueError, match="diagonal shape"):
        tf.matrix_set_diag(A, [1.0, 2.0])
    with pytest.raises(errors.InvalidArgumentError, match="num_lower must be negative"):
        _fetch(tf.matrix_band_part(A, 5, -1))
    with pytest.raises(errors.InvalidArgumentError, match="num_upper"):
        _fetch(tf.matrix_band_part(A, 0, 5))


def test_matrix_diag_family_rank_errors():
    # Build time: TF's shape-function wording; run time (unknown rank): the kernel's.
    with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
        tf.matrix_diag(3.0)
    with pytest.raises(ValueError, match="Shape must be at least rank 2 but is rank 1"):
        tf.matrix_diag_part([1.0, 2.0])
    with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
        tf.matrix_set_diag([[1.0, 2.0]], 5.0)
    p = tf.placeholder(tf.float32)
    for build, rank in ((tf.matrix_diag, 1), (tf.matrix_diag_part, 2),
                        (lambda t: tf.matrix_set_diag(t, [t]), 2)):
        with pytest.raises(errors.InvalidArgumentError,
                           match=rf"input must be at least {rank}-dim, received shape: \[\]"):
            _fetch(build(p), {p: 1.5})
    got = _fetch([tf.matrix_diag(p), tf.matrix_diag_part(p)], {p: [[1.0, 2.0], [3.0, 4.0]]})
    np.testing.assert_array_equal(got[0], [[[1, 0], [0, 2]], [[3, 0], [0, 4]]])
    np.testing.assert_array_equal(got[1], [1, 4])


def test_eye_forms():
    assert tf.eye(3).op.name == "eye/diag"
    n = tf.placeholder(tf.int32, [])
    square = tf.eye(n)
    check(square, np.eye(3, dtype=np.float32), {n: 3})
    check(tf.eye(2, 4, dtype=tf.float64), np.eye(2, 4))


def test_meshgrid_matches_numpy():
    x, y, z = [1, 2, 3], [4.0, 5.0], [7, 8]
    for indexing in ("xy", "ij"):
        gx, gy = tf.meshgrid(x, y, indexing=indexing)
        ex, ey = np.meshgrid(x, y, indexing=indexing)
        check([gx, gy], [ex.astype(np.int32), ey.astype(np.float32)])
    grids = tf.meshgrid(x, z, x, indexing="xy")
    check(grids, [g.astype(np.int32) for g in np.meshgrid(x, z, x, indexing="xy")])
    with pytest.raises(ValueError, match="indexing"):
        tf.meshgrid(x, y, indexing="yx")
    with pytest.raises(TypeError, match="invalid keyword"):
        tf.meshgrid(x, sparse=True)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(-1, 4), st.integers(-1, 4))
def test_band_part_matches_reference(rows, cols, lower, upper):
    lower, upper = min(lower, rows), min(upper, cols)
    x = np.arange(rows * cols, dtype=np.float64).reshape(rows, cols) + 1
    with tf.Graph().as_default():
        check(tf.matrix_band_part(x, lower, upper), _band(x, lower, upper))


# -- gradients -----------------------------------------------------------------------------------


GRADIENT_CASES = [
    ("MatrixBandPart", _case(lambda tf, x: tf.matrix_band_part(x, 1, 0), [3, 3])),
    ("Diag", _case(lambda tf, x: tf.diag(x), [3])),
    ("DiagPart", _case(lambda tf, x: tf.diag_part(x), [2, 2])),
    ("MatrixDiag", _case(lambda tf, x: tf.matrix_diag(x), [2, 3])),
    ("MatrixDiagPart", _case(lambda tf, x: tf.matrix_diag_part(x), [2, 3, 2])),
    ("MatrixDiagPart", _case(lambda tf, x: tf.matrix_diag_part(x), [3, 3])),
    ("MatrixSetDiag", _case(lambda tf, x, d: tf.matrix_set_diag(x, d), [2, 3], [2])),
    ("SpaceToDepth", _case(lambda tf, x: tf.space_to_depth(x, 2), [1, 2, 4, 1])),
    ("DepthToSpace", _case(lambda tf, x: tf.depth_to_space(x, 2), [1, 1, 2, 4])),
]
