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


def test_reshape_to_dimensions_and_tensor_shapes():
    v = np.arange(6, dtype=np.float32).reshape(1, 6)
    x = tf.constant(v)
    dims = tf.reshape(x, [tf.Dimension(3), tf.Dimension(2)])
    shape = tf.reshape(x, tf.TensorShape([2, 3]))
    assert dims.shape.as_list() == [3, 2] and shape.shape.as_list() == [2, 3]
    got = run([dims, shape])
    np.testing.assert_array_equal(got[0], v.reshape(3, 2))
    np.testing.assert_array_equal(got[1], v.reshape(2, 3))


def test_shapes_and_dimensions_convert_to_int_constants():
    assert run(tf.constant(tf.TensorShape([4, 7]))).tolist() == [4, 7]
    assert run(tf.constant([[tf.Dimension(2)], [tf.Dimension(5)]])).tolist() == [[2], [5]]
    assert int(run(tf.convert_to_tensor(tf.Dimension(9)))) == 9
    with pytest.raises(ValueError, match="partially known"):
        tf.constant(tf.TensorShape([None, 3]))
    with pytest.raises(ValueError, match="unknown Dimension"):
        tf.constant(tf.Dimension(None))


def test_reshape_indivisible_names_the_divisor():
    with pytest.raises(ValueError, match="evenly divisible by 7 but is 30"):
        tf.reshape(tf.zeros([5, 6]), [7, -1])


def test_object_arrays_of_python_strings_are_string_tensors():
    words = np.array([["ab", "c"], ["", "d"]], dtype=object)
    suffix = np.array("!", dtype=object)
    t = tf.constant(words)
    assert t.dtype == tf.string
    got = run([t + suffix, words + tf.constant(suffix), tf.equal(words, t)])
    expected = np.array([[w.encode() + b"!" for w in row] for row in words], dtype=object)
    np.testing.assert_array_equal(got[0], expected)
    np.testing.assert_array_equal(got[1], expected)
    assert got[2].all()
    with pytest.raises(TypeError, match="Expected string"):
        tf.constant(np.array([1, None], dtype=object))
