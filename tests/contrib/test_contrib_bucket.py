"""tf.contrib.training.bucket / bucket_by_sequence_length (queue-based lazy bucketing), checked
against a NumPy model of the buckets: rows per batch from one bucket, padding to the batch's
longest row, every kept element exactly once, the input's end closing the output."""

import numpy as np
import pytest

import tensorflux as tf


def _sequences(n):
    """Element i: the vector [i+1] * (i % 5 + 1) (lengths 1..5)."""
    ds = tf.data.Dataset.range(n).map(
        lambda i: tf.fill([tf.cast(i % 5 + 1, tf.int32)], tf.cast(i + 1, tf.int32)))
    return ds.make_one_shot_iterator().get_next()


def _drain(fetches):
    batches = []
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            for _ in range(200):
                batches.append(sess.run(fetches))
        except tf.errors.OutOfRangeError:
            pass
        coord.request_stop()
        coord.join(threads)
    return batches


@pytest.mark.parametrize("smaller", [False, True])
def test_rows_come_from_one_bucket_padded_to_the_batch_longest(smaller):
    n, boundaries, batch = 23, [3], 2
    seq = _sequences(n)
    lengths, (padded,) = tf.contrib.training.bucket_by_sequence_length(
        tf.shape(seq)[0], [seq], batch, boundaries, dynamic_pad=True,
        allow_smaller_final_batch=smaller)
    assert padded.shape.as_list() == [None if smaller else batch, None]
    batches = _drain([lengths, padded])
    seen = []
    for lens, rows in batches:
        assert len(set(np.searchsorted(boundaries, lens, side="right"))) == 1
        assert rows.shape == (len(lens), lens.max())
        for length, row in zip(lens, rows):
            value = row[0]
            ref = np.zeros(lens.max(), np.int32)
            ref[:length] = value
            np.testing.assert_array_equal(row, ref)
            assert length == (value - 1) % 5 + 1
            seen.append(int(value))
    per_bucket = np.bincount(np.searchsorted(boundaries, np.arange(n) % 5 + 1, side="right"))
    expected = n if smaller else int(sum(c // batch * batch for c in per_bucket))
    assert len(seen) == len(set(seen)) == expected


def test_keep_input_drops_elements_and_bucket_returns_the_bucket_id():
    n = 20
    seq = _sequences(n)
    length = tf.shape(seq)[0]
    which, out = tf.contrib.training.bucket(
        {"s": seq, "n": length}, tf.cast(length > 2, tf.int32), batch_size=[1, 3],
        num_buckets=2, dynamic_pad=True, keep_input=tf.equal(length % 2, 1))
    assert sorted(out) == ["n", "s"]
    batches = _drain([which, out])
    rows = 0
    for bucket_id, parts in batches:
        assert len(parts["n"]) == [1, 3][bucket_id]
        assert np.all((parts["n"] > 2) == bool(bucket_id))
        assert np.all(parts["n"] % 2 == 1)
        rows += len(parts["n"])
    kept = np.arange(n) % 5 + 1
    kept = kept[kept % 2 == 1]
    assert rows == (kept <= 2).sum() + (kept > 2).sum() // 3 * 3


def test_bad_arguments_raise_typed_errors():
    seq = tf.constant([1, 2, 3])
    with pytest.raises(ValueError, match="increasing"):
        tf.contrib.training.bucket_by_sequence_length(3, [seq], 2, [4, 4])
    with pytest.raises(TypeError, match="integers"):
        tf.contrib.training.bucket_by_sequence_length(3, [seq], 2, [1.5])
    with pytest.raises(ValueError, match="num_buckets"):
        tf.contrib.training.bucket([seq], 0, batch_size=[1, 2, 3], num_buckets=2)
