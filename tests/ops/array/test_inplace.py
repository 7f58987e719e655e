"""InplaceUpdate/Add/Sub and Empty: rows against NumPy, index forms, errors."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.ops.array import inplace

COVERED_OPS = {"InplaceUpdate", "InplaceAdd", "InplaceSub", "Empty"}


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def test_row_ops_match_numpy_with_repeated_and_negative_rows():
    x = np.arange(12.0).reshape(4, 3)
    v = np.array([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0], [0.5, 0.5, 0.5]])
    rows = [1, -1, 1]  # row 1 twice: update keeps the last, add/sub accumulate
    up, add, sub = _run([inplace.inplace_update(x, rows, v), inplace.inplace_add(x, rows, v),
                         inplace.inplace_sub(x, rows, v)])
    expected = x.copy()
    expected[3] = v[1]
    expected[1] = v[2]
    np.testing.assert_array_equal(up, expected)
    expected = x.copy()
    expected[1] += v[0] + v[2]
    expected[3] += v[1]
    np.testing.assert_array_equal(add, expected)
    np.testing.assert_array_equal(sub, 2 * x - add)


def test_scalar_row_and_whole_tensor_forms():
    x = tf.zeros([3, 2], tf.int32)
    one, every = _run([inplace.inplace_update(x, 2, [7, 8]),
                       inplace.inplace_add(x, None, [[1, 2], [3, 4], [5, 6]])])
    np.testing.assert_array_equal(one, [[0, 0], [0, 0], [7, 8]])
    np.testing.assert_array_equal(every, [[1, 2], [3, 4], [5, 6]])
    flags = _run(inplace.inplace_update(tf.ones([2, 2], tf.bool), [0], [[False, True]]))
    np.testing.assert_array_equal(flags, [[False, True], [True, True]])


def test_row_op_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be a vector"):
        _run(inplace.inplace_update([[1.0]], [[0]], [[2.0]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="x and v shape doesn't match"):
        _run(inplace.inplace_update([[1.0, 2.0]], [0], [[3.0]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="i and x shape doesn't match"):
        _run(inplace.inplace_add([[1.0]], [0, 0], [[2.0]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        _run(inplace.inplace_sub([[1.0]], [3], [[2.0]]))


@pytest.mark.parametrize("dtype", [tf.float64, tf.int64, tf.bool, tf.uint8, tf.string])
def test_empty_and_empty_like(dtype):
    made = inplace.empty([2, 0, 3], dtype)
    assert made.shape.as_list() == [2, 0, 3]
    value, like = _run([inplace.empty((2, 3), dtype, init=True),
                        inplace.empty_like(tf.zeros([4, 1], dtype))])
    assert value.shape == (2, 3) and like.shape == (4, 1)
    fill = b"" if dtype == tf.string else 0
    assert all(item == fill for item in value.reshape(-1))
    assert value.dtype == (object if dtype == tf.string else dtype.as_numpy_dtype)
