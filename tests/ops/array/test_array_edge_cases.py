"""Edge cases TF accepts: reshape of empty tensors with -1, indexing with NumPy ints and
Dimensions."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf


def _tf_reshape_ref(in_shape, sizes):
    # TF's rule: zero sizes on both sides are left out when inferring the -1 entry.
    product = int(np.prod([d for d in sizes if d > 0]))
    count = int(np.prod([d for d in in_shape if d != 0]))
    return [count // product if d == -1 else d for d in sizes]


@pytest.mark.parametrize("in_shape,sizes", [
    ([0, 6], [0, -1]), ([2, 0], [-1, 0]), ([0, 2, 3], [-1, 0, 3]), ([0, 6], [3, -1, 0]),
    ([0, 6], [-1, 2]), ([4, 0, 5], [0, -1])])
def test_reshape_empty_with_minus_one(in_shape, sizes):
    expected = tuple(_tf_reshape_ref(in_shape, sizes)) if 0 in sizes else \
        np.zeros(in_shape).reshape(sizes).shape
    const = tf.reshape(tf.zeros(in_shape), sizes)
    p = tf.placeholder(tf.float32)
    fed = tf.reshape(p, sizes)
    assert tuple(const.shape.as_list()) == expected
    got_const, got_fed = run([const, fed], {p: np.zeros(in_shape)})
    assert got_const.shape == expected and got_fed.shape == expected


def test_reshape_empty_still_rejects_bad_counts():
    p = tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(tf.reshape(p, [5, 2]), {p: np.zeros([0, 3])})


def test_index_with_numpy_ints_and_dimensions():
    v = np.arange(12).reshape(3, 4)
    x = tf.constant(v)
    got = run([x[tf.Dimension(1)], x[np.int64(2), tf.Dimension(1):],
               x[:, np.int64(1):np.int32(3):tf.Dimension(1)], x[x.shape[0] - 1]])
    np.testing.assert_array_equal(got[0], v[1])
    np.testing.assert_array_equal(got[1], v[2, 1:])
    np.testing.assert_array_equal(got[2], v[:, 1:3])
    np.testing.assert_array_equal(got[3], v[2])


def test_index_with_unknown_dimension_is_type_error():
    with pytest.raises(TypeError):
        tf.constant([1, 2])[tf.Dimension(None)]
