"""tf.contrib.lookup: vocabulary tables from tensors and files, OOV buckets (ids checked
against TensorFlow 2.21's lookup_ops for the same inputs), reverse tables, errors."""

import numpy as np
import pytest

import tensorflux as tf

lookup = tf.contrib.lookup


def _run(fetches):
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        return sess.run(fetches)


def test_index_tables_from_tensor_match_tensorflow():
    with tf.Graph().as_default():
        words = lookup.index_table_from_tensor(["emerson", "lake", "palmer"], num_oov_buckets=3)
        ints = lookup.index_table_from_tensor(tf.constant([42, 1, 7], tf.int64),
                                              num_oov_buckets=5, dtype=tf.int64)
        strong = lookup.index_table_from_tensor(["emerson", "lake"], num_oov_buckets=4,
                                                hasher_spec=lookup.StrongHashSpec([1, 2]))
        plain = lookup.index_table_from_tensor(["a", "b"], default_value=-7)
        back = lookup.index_to_string_table_from_tensor(["a", "b"], default_value="UNK")
        got = _run([
            words.lookup(tf.constant(["lake", "tarkus", "emerson", "x", "brain salad surgery"])),
            ints.lookup(tf.constant([7, 100, 42, -3], tf.int64)),
            strong.lookup(tf.constant(["lake", "tarkus", "x"])),
            plain.lookup(tf.constant([["b", "q"], ["a", "a"]])),
            back.lookup(tf.constant([1, 0, 5], tf.int64)),
            words.size(), ints.size()])
    # TensorFlow 2.21 (tensorflow.python.ops.lookup_ops) on the same inputs.
    assert got[0].tolist() == [1, 5, 0, 5, 5]
    assert got[1].tolist() == [2, 3, 0, 7]
    assert got[2].tolist() == [1, 4, 4]
    assert got[3].tolist() == [[1, -7], [0, 0]]
    assert got[4].tolist() == [b"b", b"a", b"UNK"]
    assert got[5] == 6 and got[6] == 8


def test_tables_from_files_and_sparse_keys(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("brain\nsalad\nsurgery\n")
    with tf.Graph().as_default():
        ids = lookup.index_table_from_file(str(vocab), num_oov_buckets=1)
        names = lookup.index_to_string_table_from_file(str(vocab))
        capped = lookup.index_table_from_file(str(vocab), vocab_size=2)
        sparse = tf.SparseTensor([[0, 0], [1, 2]], tf.constant(["surgery", "tarkus"]), [2, 3])
        got = _run([ids.lookup(tf.constant(["salad", "tarkus"])),
                    names.lookup(tf.constant([2, 9], tf.int64)),
                    capped.lookup(tf.constant(["surgery", "brain"])),
                    ids.lookup(sparse),
                    lookup.string_to_index(tf.constant(["y", "x", "z"]), ["x", "y"]),
                    lookup.index_to_string(tf.constant([1, 3], tf.int64), ["x", "y"])])
    assert got[0].tolist() == [1, 3]
    assert got[1].tolist() == [b"surgery", b"UNK"]
    assert got[2].tolist() == [-1, 0]
    assert got[3].values.tolist() == [2, 3] and got[3].dense_shape.tolist() == [2, 3]
    assert got[4].tolist() == [1, 0, -1]
    assert got[5].tolist() == [b"y", b"UNK"]


def test_hash_table_tf1_names_and_errors():
    with tf.Graph().as_default():
        init = lookup.KeyValueTensorInitializer(["a", "b"], np.array([3, 4], np.int64))
        table = lookup.HashTable(init, -1, shared_name="shared_words")
        assert table.init is table.initializer
        assert _run(table.lookup(tf.constant(["b", "c"]))).tolist() == [4, -1]
        only_buckets = lookup.IdTableWithHashBuckets(None, 10)
        assert 0 <= _run(only_buckets.lookup(tf.constant(["zz"])))[0] < 10
        with pytest.raises(ValueError, match="vocabulary_file must be specified"):
            lookup.index_table_from_file(None)
        with pytest.raises(ValueError, match="num_oov_buckets"):
            lookup.index_table_from_tensor(["a"], num_oov_buckets=-1)
        with pytest.raises(TypeError, match="Only integer and string keys"):
            lookup.index_table_from_tensor([1.0], dtype=tf.float32)
        with pytest.raises(ValueError, match="Expected integer"):
            lookup.index_table_from_tensor(["a"], dtype=tf.int64)
        with pytest.raises(ValueError, match="either table or oov_buckets"):
            lookup.IdTableWithHashBuckets(None, 0)
        with pytest.raises(ValueError, match="size 2"):
            lookup.StrongHashSpec([1])
        with pytest.raises(tf.errors.FailedPreconditionError):
            with tf.Session() as sess:
                sess.run(table.lookup(tf.constant(["a"])))


def test_object_arrays_of_text_feed_as_utf8_bytes():
    with tf.Graph().as_default():
        words = tf.placeholder(tf.string, [None])
        table = lookup.index_table_from_tensor(["a", "bé"])
        fed = np.array(["bé", "a", "z"], dtype=object)
        with tf.Session() as sess:
            sess.run(tf.tables_initializer())
            got, ids = sess.run([words, table.lookup(words)], {words: fed})
    assert got.tolist() == [b"b\xc3\xa9", b"a", b"z"] and ids.tolist() == [1, 0, -1]
    assert fed.tolist() == ["bé", "a", "z"]  # the caller's array is not changed
