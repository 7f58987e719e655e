"""EditDistance / tf.edit_distance against a scalar Levenshtein reference (values checked
against TensorFlow on the fixed case), shapes, normalization and errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf

COVERED_OPS = {"EditDistance"}
GRADIENT_CASES = []  # EditDistance has no gradient, as in TensorFlow


def _levenshtein(a, b):
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def test_grouped_sequences_match_tensorflow():
    with tf.Graph().as_default():
        hyp = tf.SparseTensor([[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 0, 3]],
                              ["a", "b", "c", "x", "y"], [2, 2, 4])
        truth = tf.SparseTensor([[0, 0, 0], [0, 1, 0], [0, 1, 1], [1, 1, 0], [2, 0, 0]],
                                ["a", "c", "d", "z", "q"], [3, 2, 2])
        norm, raw = tf.edit_distance(hyp, truth), tf.edit_distance(hyp, truth, normalize=False)
        assert norm.shape.as_list() == [3, 2] and norm.dtype == tf.float32
        assert norm.op.type == "EditDistance" and norm.op.name == "edit_distance"
        norm_v, raw_v = _run([norm, raw])
    # TF: an empty truth under a non-empty hypothesis normalizes to inf.
    np.testing.assert_array_equal(norm_v, [[1.0, 0.5], [np.inf, 1.0], [1.0, 0.0]])
    np.testing.assert_array_equal(raw_v, [[1.0, 1.0], [2.0, 1.0], [1.0, 0.0]])


def test_cast_sparse_decoder_output_and_errors():
    with tf.Graph().as_default():
        hyp = tf.cast(tf.SparseTensor([[0, 0], [0, 1]], tf.constant([1, 2], tf.int64), [1, 2]),
                      tf.int32)
        assert isinstance(hyp, tf.SparseTensor) and hyp.dtype == tf.int32
        truth = tf.SparseTensor([[0, 0], [0, 1], [0, 2]], [1, 3, 2], [1, 3])
        assert _run(tf.edit_distance(hyp, truth)).tolist() == pytest.approx([1 / 3])
        with pytest.raises(TypeError, match="SparseTensor"):
            tf.edit_distance(tf.constant([1]), truth)
        with pytest.raises(ValueError, match="ranks"):
            tf.edit_distance(hyp, tf.SparseTensor([[0, 0, 0]], [1], [1, 1, 1]))
        with pytest.raises(TypeError):
            tf.edit_distance(hyp, tf.SparseTensor([[0, 0]], [1.0], [1, 1]))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 3), max_size=6),
                          st.lists(st.integers(0, 3), max_size=6)), min_size=1, max_size=5))
def test_matches_scalar_levenshtein(pairs):
    def sparse(seqs):
        idx = [[b, i] for b, s in enumerate(seqs) for i in range(len(s))]
        vals = [v for s in seqs for v in s]
        width = max([len(s) for s in seqs] + [1])
        return tf.SparseTensor(np.array(idx, np.int64).reshape(-1, 2), np.array(vals, np.int32),
                               [len(seqs), width])

    hyps, truths = [p[0] for p in pairs], [p[1] for p in pairs]
    with tf.Graph().as_default():
        got = _run(tf.edit_distance(sparse(hyps), sparse(truths), normalize=False))
    np.testing.assert_array_equal(got, [_levenshtein(h, t) for h, t in pairs])
