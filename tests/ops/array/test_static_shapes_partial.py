"""Static shapes from partially known inputs, as TensorFlow 2.21 (tf.compat.v1 graph mode)
infers them (cases found by comparing ~180 graph constructions), each checked against the
shape the kernel produces when run."""

import numpy as np
import pytest
from op_helpers import (
    graph,  # noqa: F401 (graph: autouse fixture)
    run,
)

import tensorflux as tf


def ph(shape, dtype=tf.float32):
    return tf.placeholder(dtype, shape)


def _check(y, expected, feed):
    """Static shape equals TF's `expected`; the run value's shape is compatible with it."""
    assert (y.shape.as_list() if y.shape.ndims is not None else None) == expected
    value = run(y, feed)
    assert y.shape.is_compatible_with(value.shape)
    return value


def test_dynamic_stitch_first_dim_from_constant_indices():
    a, b = ph([2, None, 3]), ph([1, 2, 5, None])
    y = tf.dynamic_stitch([tf.constant([0, 4]), tf.constant([[1, 2]])], [a, b])
    va, vb = np.ones([2, 5, 3], np.float32), 2 * np.ones([1, 2, 5, 3], np.float32)
    value = _check(y, [5, 5, 3], {a: va, b: vb})
    np.testing.assert_array_equal(value[[0, 4]], va)
    np.testing.assert_array_equal(value[1:3], vb[0])
    idx = ph([2], tf.int32)
    y = tf.dynamic_stitch([idx, tf.constant([1])], [ph([2, 3]), ph([1, None])])
    assert y.shape.as_list() == [None, 3]
    # ParallelDynamicStitch gets the same rule; empty constant indices count as none
    p = tf.parallel_dynamic_stitch([tf.constant([3, 1]), tf.constant([0])],
                                   [ph([2, None]), ph([1, 7])])
    assert p.shape.as_list() == [4, 7]
    e = tf.dynamic_stitch([tf.constant([], tf.int32)], [tf.zeros([0, 3])])
    np.testing.assert_array_equal(_check(e, [0, 3], None), np.zeros([0, 3]))
    assert tf.dynamic_stitch([tf.constant([0, 1])], [ph(None)]).shape.ndims is None


def test_dynamic_stitch_incompatible_shapes_raise():
    with pytest.raises(ValueError, match="DynamicStitch"):
        tf.dynamic_stitch([tf.constant([0]), tf.constant([1])], [ph([1, 3]), ph([1, 4])])
    with pytest.raises(ValueError, match="must start with indices shape"):
        tf.dynamic_stitch([tf.constant([0, 1])], [ph([3, 4])])


def test_pad_partial_paddings():
    x, p = ph([4, 3]), ph([2], tf.int32)
    y = tf.pad(x, tf.stack([tf.constant([1, 2]), p]))  # first row known: 4 + 1 + 2
    value = _check(y, [7, None], {x: np.ones([4, 3]), p: [1, 0]})
    np.testing.assert_array_equal(value, np.pad(np.ones([4, 3]), [[1, 2], [1, 0]]))
    m = ph([4, None])
    y = tf.pad(m, tf.stack([[1, 1], p]), mode="REFLECT")
    value = _check(y, [6, None], {m: np.arange(20.0).reshape(4, 5), p: [2, 1]})
    np.testing.assert_array_equal(value, np.pad(np.arange(20.0).reshape(4, 5), [[1, 1], [2, 1]],
                                                mode="reflect"))


def test_pad_python_rows_with_a_fed_row_of_unknown_shape():
    # A Python list whose one row is a placeholder of unknown shape: the other rows'
    # dims are still known (TF1's pad reads the list's rows directly).
    x, anything = ph([5, 2]), tf.placeholder(tf.int32)
    for mode in ("CONSTANT", "SYMMETRIC"):
        y = tf.pad(x, [[2, 0], anything], mode=mode)
        value = _check(y, [7, None], {x: np.ones([5, 2]), anything: [1, 1]})
        np.testing.assert_array_equal(value, np.pad(np.ones([5, 2]), [[2, 0], [1, 1]],
                                                    mode=mode.lower()))
    y = tf.pad(x, [[anything, 1], [tf.constant(3), 0]])
    _check(y, [None, 5], {x: np.ones([5, 2]), anything: 0})


def test_pad_unknown_paddings_or_input():
    paddings = ph([2, 2], tf.int32)
    assert tf.pad(ph([None, 3]), paddings).shape.as_list() == [None, None]
    assert tf.pad(ph(None), ph([3, 2], tf.int32)).shape.as_list() == [None] * 3
    assert tf.pad(ph([2, 3]), ph([None, 2], tf.int32)).shape.as_list() == [None, None]
    x = ph(None)
    y = tf.pad(x, [[1, 1], [0, 2]])
    _check(y, [None, None], {x: np.ones([2, 2])})
    x = ph([None, 3, 4])
    y = tf.pad(x, [[1, 1], [2, 0], [0, 0]])
    assert _check(y, [None, 5, 4], {x: np.ones([1, 3, 4])}).shape == (3, 5, 4)
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        tf.pad(ph([4, 5]), [[1, 1]])
    with pytest.raises(ValueError, match="non-negative"):
        tf.pad(ph([None, 3]), [[1, 1], [-1, 0]])


def test_tile_partial_multiples():
    x, n = ph([2, 3, None]), ph([], tf.int32)
    y = tf.tile(x, tf.stack([4, n, 2]))
    value = _check(y, [8, None, None], {x: np.ones([2, 3, 1]), n: 2})
    assert value.shape == (8, 6, 2)
    m = ph([1], tf.int32)
    x2 = ph([2, 3])
    y = tf.tile(x2, tf.concat([[5], m], 0))
    _check(y, [10, None], {x2: np.ones([2, 3]), m: [2]})
    y = tf.tile(x2, tf.shape(ph([None, 4])))  # multiples from a partly known shape
    assert y.shape.as_list() == [None, 12]
    z = ph([None, 3])
    y = tf.tile(z, [0, 2])  # a zero multiple gives 0 even for an unknown dim
    assert _check(y, [0, 6], {z: np.ones([5, 3])}).shape == (0, 6)
    assert tf.tile(ph([2, 3]), ph([2], tf.int32)).shape.as_list() == [None, None]
    assert tf.tile(ph(None), [2, 2, 1]).shape.as_list() == [None] * 3
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 3"):
        tf.tile(ph([2, 3]), [2, 2, 1])


def test_space_to_batch_with_unknown_block_or_paddings():
    x = ph([2, 4, 6, 3])
    assert tf.space_to_batch_nd(x, ph([2], tf.int32), [[0, 0], [0, 0]]).shape.as_list() == \
        [None, None, None, 3]
    pads = ph([2, 2], tf.int32)
    y = tf.space_to_batch_nd(x, [2, 2], pads)
    feed = {x: np.arange(144.0).reshape(2, 4, 6, 3), pads: [[0, 0], [1, 1]]}
    assert _check(y, [8, None, None, 3], feed).shape == (8, 2, 4, 3)
    crops = ph([2, 2], tf.int32)
    z = ph([8, 2, 3, 3])
    y = tf.batch_to_space_nd(z, [2, 2], crops)
    feed = {z: np.ones([8, 2, 3, 3]), crops: [[0, 1], [1, 0]]}
    assert _check(y, [2, None, None, 3], feed).shape == (2, 3, 5, 3)
    assert tf.space_to_batch_nd(ph(None), [2, 2], [[0, 0], [0, 0]]).shape.ndims is None
    with pytest.raises(ValueError, match="evenly divisible by 2 but is 5"):
        tf.space_to_batch_nd(ph([2, 5, 6, 3]), [2, 2], [[0, 0], [0, 0]])
    with pytest.raises(ValueError, match="evenly divisible by 4 but is 6"):
        tf.batch_to_space_nd(ph([6, 2, 3, 3]), [2, 2], [[0, 0], [0, 0]])


def test_space_to_depth_rank_and_divisibility():
    x = ph(None)
    y = tf.space_to_depth(x, 2)
    assert _check(y, [None] * 4, {x: np.ones([1, 4, 2, 3])}).shape == (1, 2, 1, 12)
    assert tf.depth_to_space(ph([None, 2, None, 12]), 2).shape.as_list() == [None, 4, None, 3]
    with pytest.raises(ValueError, match="evenly divisible by 2 but is 5"):
        tf.space_to_depth(ph([None, 5, 4, 3]), 2)
    with pytest.raises(ValueError, match="evenly divisible by 4 but is 6"):
        tf.depth_to_space(ph([None, 5, 4, 6]), 2)


def test_shape_tensors_followed_through_cast_slice_and_stack():
    x, n = ph([None, 12]), ph([], tf.int64)
    y = tf.reshape(x, tf.cast(tf.stack([n, 3, 4]), tf.int32))
    assert _check(y, [None, 3, 4], {x: np.ones([2, 12]), n: 2}).shape == (2, 3, 4)
    assert tf.zeros(tf.shape(ph([None, 4, 5]))[1:]).shape.as_list() == [4, 5]
    k = ph([], tf.int32)
    r = tf.random_uniform(tf.stack([k, 5]))
    assert _check(r, [None, 5], {k: 3}).shape == (3, 5)
    s = ph([5, 6, 7])
    y = tf.slice(s, [1, 0, 2], tf.stack([2, k, -1]))
    assert _check(y, [2, None, None], {s: np.ones([5, 6, 7]), k: 4}).shape == (2, 4, 5)


def test_gather_set_diag_and_broadcast_args():
    params, axis = ph([2, 3, 4]), ph([], tf.int32)
    y = tf.gather(params, ph([5], tf.int32), axis=axis)
    assert y.shape.as_list() == [None] * 3
    d = ph([2, None])
    y = tf.matrix_set_diag(ph([None, 3, None]), d)
    assert y.shape.as_list() == [2, 3, None]
    b = tf.broadcast_dynamic_shape(tf.constant([2, 1]), tf.stack([k := ph([], tf.int32), 3]))
    assert _check(b, [2], {k: 2}).tolist() == [2, 3]


def test_tile_with_unknown_ranks_keeps_what_is_known():
    unknown = tf.placeholder(tf.float32)
    assert tf.tile(unknown, tf.placeholder(tf.int32)).shape.ndims is None
    assert tf.tile(unknown, tf.placeholder(tf.int32, [3])).shape.as_list() == [None] * 3
    assert tf.tile(tf.placeholder(tf.float32, [None, 2]),
                   tf.placeholder(tf.int32)).shape.as_list() == [None, None]


def test_reshape_to_a_packed_list_and_to_sizes_beyond_int32():
    x = tf.placeholder(tf.float32)
    assert tf.reshape(x, [tf.placeholder(tf.int32), 37]).shape.as_list() == [None, 37]
    big = tf.placeholder(tf.bool, [50000, 50000])
    flat = tf.reshape(big, [50000 ** 2])  # the shape list does not fit int32: int64, as TF
    assert flat.op.inputs[1].dtype == tf.int64 and flat.shape.as_list() == [50000 ** 2]
    assert tf.reshape(big, [1, 50000 ** 2]).shape.as_list() == [1, 50000 ** 2]
    assert tf.reshape(tf.zeros([2, 3]), [6]).op.inputs[1].dtype == tf.int32
