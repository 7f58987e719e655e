"""ReverseSequence: values against a NumPy loop over the batch, the shape function's checks in
TF's words (dims in range, batch dim against len(seq_lengths), seq_lengths a vector) and the
kernel's seq_dim == batch_dim check."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf


def _reference(x, lengths, seq_axis, batch_axis):
    moved = np.moveaxis(x, (batch_axis, seq_axis), (0, 1)).copy()
    for b, n in enumerate(lengths):
        moved[b, :n] = moved[b, :n][::-1]
    return np.moveaxis(moved, (0, 1), (batch_axis, seq_axis))


@pytest.mark.parametrize("seq_axis,batch_axis", [(1, 0), (0, 2), (2, 1)])
def test_values_match_reference(seq_axis, batch_axis):
    x = np.random.RandomState(3).randn(4, 5, 3).astype(np.float32)
    batch = x.shape[batch_axis]
    lengths = np.random.RandomState(5).randint(0, x.shape[seq_axis] + 1, size=batch)
    got = run(tf.reverse_sequence(x, lengths, seq_axis=seq_axis, batch_axis=batch_axis))
    np.testing.assert_array_equal(got, _reference(x, lengths, seq_axis, batch_axis))


def test_build_time_checks_use_tf_wording():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.reverse_sequence(x, [1, 1, 1], seq_axis=1)
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        tf.reverse_sequence(x, [[1, 1]], seq_axis=1)
    with pytest.raises(ValueError, match="seq_dim must be < input rank"):
        tf.reverse_sequence(x, [1, 1], seq_axis=2)
    with pytest.raises(ValueError, match="batch_dim must be < input rank"):
        tf.reverse_sequence(x, [1, 1], seq_axis=1, batch_axis=5)


def test_equal_seq_and_batch_dims_fail_when_run():
    out = tf.reverse_sequence(np.zeros((2, 2), np.float32), [1, 1], seq_axis=0, batch_axis=0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="batch_dim == seq_dim == 0"):
        run(out)


def test_shape_function_keeps_both_wordings_for_rank_errors():
    with pytest.raises(ValueError, match=r"Shape must be rank 2 but is rank 1 \(Shape \(3,\) "
                                         r"must have rank 2\)"):
        tf.matmul(np.zeros(3, np.float32), np.zeros((3, 3), np.float32))
    with pytest.raises(ValueError, match=r"^Shape \(3,\) must have rank 2$"):
        tf.TensorShape([3]).with_rank(2)
