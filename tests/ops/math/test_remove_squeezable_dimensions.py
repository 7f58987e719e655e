"""remove_squeezable_dimensions (static and run-time rank decisions) and its use by
confusion_matrix on labels/predictions that carry a trailing size-1 axis."""

import numpy as np
import pytest
from op_helpers import graph  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf
from tensorflux.ops.math.histogram import remove_squeezable_dimensions


def _run(tensors, feed=None):
    with tf.Session() as sess:
        return sess.run(list(tensors), feed_dict=feed)


# (labels shape, predictions shape, expected_rank_diff, labels out, predictions out)
CASES = [
    ((4, 1), (4,), 0, (4,), (4,)),
    ((4,), (4, 1), 0, (4,), (4,)),
    ((5, 2, 1), (5, 2, 1), 0, (5, 2, 1), (5, 2, 1)),
    ((5, 2, 1), (5, 2, 7), 1, (5, 2), (5, 2, 7)),
    ((5, 2, 7), (5, 2, 1), -1, (5, 2, 7), (5, 2)),
    ((5, 3), (5, 2, 4, 1), 0, (5, 3), (5, 2, 4, 1)),   # rank gap 2: left alone
    ((), (), 0, (), ()),
]


@pytest.mark.parametrize("l_shape,p_shape,diff,l_out,p_out", CASES)
def test_static_and_fed_ranks_agree(l_shape, p_shape, diff, l_out, p_out):
    rng = np.random.RandomState(3)
    labels = rng.randint(0, 9, size=l_shape).astype(np.int32)
    preds = rng.randint(0, 9, size=p_shape).astype(np.int32)
    s_lab, s_pred = remove_squeezable_dimensions(labels, preds, expected_rank_diff=diff)
    assert s_lab.shape.as_list() == list(l_out) and s_pred.shape.as_list() == list(p_out)
    lp = tf.placeholder(tf.int32)
    pp = tf.placeholder(tf.int32)
    d_lab, d_pred = remove_squeezable_dimensions(lp, pp, expected_rank_diff=diff)
    assert d_lab.shape.ndims is None and d_pred.shape.ndims is None
    got = _run([s_lab, s_pred, d_lab, d_pred], {lp: labels, pp: preds})
    for value, ref in zip(got, [labels.reshape(l_out), preds.reshape(p_out)] * 2):
        assert value.shape == ref.shape
        np.testing.assert_array_equal(value, ref)


def test_partially_known_rank_keeps_non_unit_last_dim():
    lp = tf.placeholder(tf.int32, shape=[None, 3])
    pp = tf.placeholder(tf.int32)
    labels, preds = remove_squeezable_dimensions(lp, pp)
    assert labels is lp or labels.shape.as_list() == [None, 3]
    got = _run([labels, preds], {lp: np.ones((2, 3), np.int32),
                                  pp: np.zeros((2, 3, 1), np.int32)})
    assert got[0].shape == (2, 3) and got[1].shape == (2, 3)


def test_confusion_matrix_squeezes_trailing_axis():
    labels = np.array([[0], [2], [1], [2]], np.int64)
    preds = np.array([0, 1, 1, 2], np.int64)
    expected = np.zeros((3, 3), np.int32)
    for lab, pred in zip(labels[:, 0], preds):
        expected[lab, pred] += 1
    cm = tf.confusion_matrix(labels, preds, num_classes=3)
    np.testing.assert_array_equal(_run([cm])[0], expected)


def test_confusion_matrix_rejects_unequal_lengths():
    with pytest.raises(ValueError):
        tf.confusion_matrix([1, 2, 0], [1, 2])


def test_static_non_unit_last_dim_is_left_alone():
    labels, preds = remove_squeezable_dimensions(np.ones((5, 3)), np.ones((5, 3, 4)))
    assert labels.shape.as_list() == [5, 3] and preds.shape.as_list() == [5, 3, 4]
