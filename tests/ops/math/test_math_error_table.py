"""math error table: TF's error class, the phase it is raised in (graph construction or run
time) and the facts its message carries (recorded from TensorFlow in graph mode; Cholesky of a
non-positive-definite matrix raises as in TF 1.x).

Each row: (id, builder -> (fetch, feed), phase "build" | "run", error class, regex)."""

import numpy as np
import pytest
from op_helpers import check_error_row, graph, run  # noqa: F401

import tensorflux as tf

BAD = tf.errors.InvalidArgumentError
M = np.ones([2, 3], np.float32)
INTS = ([1, 2], [1, 0])


def _const(fn):
    return lambda: (fn(), None)


def _fed(fn, value, dtype=tf.float32):
    p = tf.placeholder(dtype)
    return fn(p), {p: value}


def _int_op(fn):
    return _const(lambda: fn(tf.constant(INTS[0]), tf.constant(INTS[1])))


ERROR_TABLE = [
    ("matmul inner mismatch", _const(lambda: tf.matmul(M, M)),
     "build", ValueError, "MatMul.*Dimensions must be equal, but are 3 and 2"),
    ("matmul inner mismatch fed", lambda: _fed(lambda p: tf.matmul(M, p), M),
     "run", BAD, r"Matrix size-incompatible: In\[0\]: \[2, 3\], In\[1\]: \[2, 3\]"),
    ("matmul rank 1", _const(lambda: tf.matmul(np.ones([3], np.float32), M)),
     "build", ValueError, r"MatMul.*\(3,\) must have rank 2"),
    ("batch matmul batch mismatch",
     _const(lambda: tf.matmul(np.ones([2, 2, 3], np.float32), np.ones([3, 3, 2], np.float32))),
     "build", ValueError, "Dimensions must be equal, but are 2 and 3"),
    ("batch matmul batch mismatch fed",
     lambda: _fed(lambda p: tf.matmul(np.ones([2, 2, 3], np.float32), p),
                  np.ones([3, 3, 2], np.float32)),
     "run", BAD, r"compatible batch dimensions: \[2, 2, 3\] vs. \[3, 3, 2\]"),
    ("reduce_sum axis out of range", _const(lambda: tf.reduce_sum(M, axis=2)),
     "build", ValueError, "Invalid reduction dimension 2 for input with 2 dimensions"),
    ("reduce_sum axis out of range fed",
     lambda: _fed(lambda p: tf.reduce_sum(M, axis=p), 2, tf.int32),
     "run", BAD, "Invalid reduction dimension.*2 for input with 2 dimension"),
    ("reduce_sum axes of rank 2",
     _const(lambda: tf.reduce_sum(tf.placeholder(tf.float32), [[1], [2]])),
     "build", ValueError, r"Sum.*must be at most rank 1 but is rank 2"),
    ("reduce_max axis -3", _const(lambda: tf.reduce_max(M, axis=-3)),
     "build", ValueError, "Invalid reduction dimension -3 for input with 2 dimensions"),
    ("argmax over an empty dim", _const(lambda: tf.argmax(np.ones([2, 0], np.float32), axis=1)),
     "run", BAD, r"Reduction axis 1 is empty in shape \[2, 0\]"),
    ("argmax axis out of range", _const(lambda: tf.argmax(M, axis=2)),
     "build", ValueError, r"ArgMax.*range \[-2, 2\), but got 2"),
    ("cast string to float", _const(lambda: tf.cast(tf.constant(["a"]), tf.float32)),
     "run", tf.errors.UnimplementedError, "Cast string to float32 is not supported"),
    ("cast float to string", _const(lambda: tf.cast(M, tf.string)),
     "run", tf.errors.UnimplementedError, "Cast float32 to string is not supported"),
    ("add of mismatched shapes",
     _const(lambda: tf.add(np.ones([2], np.float32), np.ones([3], np.float32))),
     "build", ValueError, "Dimensions must be equal, but are 2 and 3"),
    ("add of mismatched shapes fed",
     lambda: _fed(lambda p: tf.add(p, np.ones([3], np.float32)), np.ones([2], np.float32)),
     "run", BAD, r"Incompatible shapes: \[2\] vs. \[3\]"),
    ("mul of mismatched shapes fed",
     lambda: _fed(lambda p: p * np.ones([2, 3], np.float32), np.ones([4, 2], np.float32)),
     "run", BAD, r"Incompatible shapes: \[4, 2\] vs. \[2, 3\]"),
    ("add of int and float", _const(lambda: tf.add(tf.constant(1), tf.constant(1.0))),
     "build", TypeError, "int32.*float32"),
    ("floordiv by zero", _int_op(tf.math.floordiv), "run", BAD, "Integer division by zero"),
    ("floormod by zero", _int_op(tf.math.floormod), "run", BAD, "Integer division by zero"),
    ("div by zero", _int_op(tf.div), "run", BAD, "Integer division by zero"),
    ("cumsum axis out of range", _const(lambda: tf.cumsum(M, axis=2)),
     "run", BAD, r"Expected scan axis in the range \[-2, 2\), but got 2"),
    ("cumprod axis below range", _const(lambda: tf.cumprod(M, axis=-3)),
     "run", BAD, r"Cumprod: Expected scan axis in the range \[-2, 2\), but got -3"),
    ("cumsum axis out of range fed", lambda: _fed(lambda p: tf.cumsum(M, axis=p), 2, tf.int32),
     "run", BAD, r"Expected scan axis in the range \[-2, 2\), but got 2"),
    ("cumsum axis not a scalar", _const(lambda: tf.cumsum(M, axis=[0, 1])),
     "run", BAD, r"Cumsum: axis must be a scalar, not \[2\]"),
    ("cholesky of a non-PD matrix",
     _const(lambda: tf.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]], np.float32))),
     "run", BAD, "Cholesky decomposition was not successful"),
    ("cholesky of a non-square matrix", _const(lambda: tf.cholesky(M)),
     "build", ValueError, "Cholesky.*2 and 3"),
    ("matrix_inverse of a singular matrix",
     _const(lambda: tf.matrix_inverse(np.zeros([2, 2], np.float32))),
     "run", BAD, "Input is not invertible"),
    ("matrix_inverse non-square fed", lambda: _fed(tf.matrix_inverse, M),
     "run", BAD, r"square matrices, got shape \[2, 3\]"),
    ("matrix_determinant non-square", _const(lambda: tf.matrix_determinant(M)),
     "build", ValueError, "MatrixDeterminant.*2 and 3"),
    ("matrix_solve rhs rows",
     _const(lambda: tf.matrix_solve(np.eye(2, dtype=np.float32), np.ones([3, 1], np.float32))),
     "build", ValueError, "MatrixSolve.*2 and 3"),
]


@pytest.mark.parametrize("build,phase,error,words", [r[1:] for r in ERROR_TABLE],
                         ids=[r[0] for r in ERROR_TABLE])
def test_math_error_table(build, phase, error, words):
    check_error_row(build, phase, error, words)


def test_valid_inputs_still_compute():
    got = run([tf.cumsum(M, axis=tf.constant(1)), tf.math.floordiv(tf.constant([7, -7]), 2),
               tf.add(np.ones([2, 1], np.float32), np.arange(3, dtype=np.float32))])
    np.testing.assert_array_equal(got[0], np.cumsum(M, 1))
    np.testing.assert_array_equal(got[1], [3, -4])
    np.testing.assert_array_equal(got[2], 1 + np.arange(3, dtype=np.float32)[None].repeat(2, 0))
