"""Lookup tables: static, vocabulary and mutable tables, initializers, errors as TensorFlow's."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.framework import errors

COVERED_OPS = {"HashTableV2", "MutableHashTableV2", "MutableHashTableOfTensorsV2",
               "InitializeTableV2", "LookupTableImportV2", "InitializeTableFromTextFileV2",
               "LookupTableFindV2", "LookupTableInsertV2", "LookupTableRemoveV2",
               "LookupTableSizeV2", "LookupTableExportV2", "MutableDenseHashTableV2"}
GRADIENT_CASES = []  # table ops are not differentiable


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _kv_table(keys=("a", "b", "c"), values=(1, 2, 3), default=-1, **kwargs):
    init = tf.lookup.KeyValueTensorInitializer(list(keys), list(values), **kwargs)
    return tf.lookup.StaticHashTable(init, default)


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return str(path)


# -- static hash tables --------------------------------------------------------------------------

def test_static_hash_table_lookup_size_export(graph):
    table = _kv_table(value_dtype=tf.int64)
    assert (table.key_dtype, table.value_dtype, table.name) == (tf.string, tf.int64, "hash_table")
    assert table.resource_handle.dtype == tf.resource
    flat = table.lookup(tf.constant(["a", "x", "c"]))
    grid = table.lookup(tf.constant([["b", "b"], ["zz", "a"]]))
    assert flat.dtype == tf.int64 and flat.shape.as_list() == [3]
    assert grid.shape.as_list() == [2, 2]
    assert graph.get_collection(tf.GraphKeys.TABLE_INITIALIZERS) == [table.initializer]
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        got_flat, got_grid, size = sess.run([flat, grid, table.size()])
        keys, values = sess.run(table.export())
    np.testing.assert_array_equal(got_flat, [1, -1, 3])
    np.testing.assert_array_equal(got_grid, [[2, 2], [-1, 1]])
    assert size == 3 and isinstance(size, np.int64)
    np.testing.assert_array_equal(keys, [b"a", b"b", b"c"])
    np.testing.assert_array_equal(values, [1, 2, 3])


def test_lookup_before_initialization_fails(graph):
    table = _kv_table()
    out = table.lookup(tf.constant(["a"]))
    with tf.Session() as sess:
        with pytest.raises(errors.FailedPreconditionError, match="Table not initialized."):
            sess.run(out)
        with pytest.raises(errors.FailedPreconditionError, match="Table not initialized."):
            sess.run(table.size())
        sess.run(table.initializer)
        np.testing.assert_array_equal(sess.run(out), [1])


def test_tables_live_per_session(graph):
    table = _kv_table()
    out = table.lookup(tf.constant(["b"]))
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        sess.run(tf.tables_initializer())  # a second run changes nothing
        assert sess.run(out).tolist() == [2]
    with tf.Session() as sess:
        with pytest.raises(errors.FailedPreconditionError):
            sess.run(out)


def test_numeric_keys_and_values(graph):
    table = _kv_table(keys=[7, -3, 100], values=[0.5, 1.5, 2.5], default=np.nan,
                      key_dtype=tf.int64, value_dtype=tf.float64)
    int32_table = _kv_table(keys=[1, 2], values=[True, False], default=False)
    out = table.lookup(tf.constant([100, 8, -3], tf.int64))
    flags = int32_table.lookup(tf.constant([2, 1, 5]))
    with tf.Session() as sess:
        sess.run(tf.initialize_all_tables())
        got, got_flags = sess.run([out, flags])
    np.testing.assert_array_equal(got, [2.5, np.nan, 1.5])
    assert got_flags.dtype == np.bool_ and got_flags.tolist() == [False, True, False]


def test_sparse_keys_give_sparse_values(graph):
    table = _kv_table()
    keys = tf.SparseTensor([[0, 0], [1, 2]], ["c", "q"], [2, 3])
    out = table.lookup(keys)
    assert isinstance(out, tf.SparseTensor)
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        value = sess.run(out)
    np.testing.assert_array_equal(value.values, [3, -1])
    np.testing.assert_array_equal(value.indices, [[0, 0], [1, 2]])
    np.testing.assert_array_equal(value.dense_shape, [2, 3])


def test_graph_build_errors(graph):
    table = _kv_table()
    with pytest.raises(TypeError, match="Dtype of argument `keys` must be"):
        table.lookup(tf.constant([1, 2]))
    with pytest.raises(TypeError):
        _kv_table(default="x")
    with pytest.raises(ValueError):
        tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2, 3]).initialize(table)
    with pytest.raises(ValueError, match="rank 1"):
        _kv_table(keys=[["a", "b"]], values=[[1, 2]])
    with pytest.raises(TypeError, match="Invalid key dtype"):
        tf.lookup.KeyValueTensorInitializer([1, 2], [1, 2]).initialize(table)
    with pytest.raises(TypeError):
        tf.lookup.KeyValueTensorInitializer(["a"], [1], key_dtype=tf.int64)
    with pytest.raises(ValueError):
        _kv_table(default=[1, 2])


def test_duplicate_keys(graph):
    same = _kv_table(keys=["a", "b", "a"], values=[4, 5, 4])
    differ = _kv_table(keys=["a", "b", "a"], values=[4, 5, 6])
    with tf.Session() as sess:
        sess.run(same.initializer)
        assert sess.run(same.lookup(tf.constant(["a", "b"]))).tolist() == [4, 5]
        assert sess.run(same.size()) == 2
        with pytest.raises(errors.FailedPreconditionError,
                           match="HashTable has different value for same key. Key a has 4"):
            sess.run(differ.initializer)


def test_fed_initializer_and_shared_name(graph):
    keys = tf.placeholder(tf.string, [None])
    values = tf.placeholder(tf.int32, [None])
    from tensorflux.ops.data_flow import lookup as lookup_ops

    first = lookup_ops.HashTableV2(key_dtype=tf.string, value_dtype=tf.int32, shared_name="t")
    second = lookup_ops.HashTableV2(key_dtype=tf.string, value_dtype=tf.int32, shared_name="t")
    init = lookup_ops.InitializeTableV2(first, keys, values)
    find = lookup_ops.LookupTableFindV2(second, tf.constant(["y", "n"]), np.int32(0))
    with tf.Session() as sess:
        sess.run(init, {keys: ["y"], values: [9]})
        assert sess.run(find).tolist() == [9, 0]
        with pytest.raises(errors.InvalidArgumentError, match="same size 2 vs 1"):
            other = lookup_ops.HashTableV2(key_dtype=tf.string, value_dtype=tf.int32)
            sess.run(lookup_ops.InitializeTableV2(other, keys, values),
                     {keys: ["a", "b"], values: [1]})


def test_tables_initializer_without_tables(graph):
    op = tf.tables_initializer()
    assert op.type == "NoOp" and op.name == "init_all_tables"
    with tf.Session() as sess:
        sess.run(op)


@settings(max_examples=15, deadline=None)
@given(st.dictionaries(st.integers(-50, 50), st.integers(-1000, 1000), min_size=1, max_size=20),
       st.lists(st.integers(-60, 60), min_size=1, max_size=30))
def test_lookup_matches_dict(mapping, queries):
    with tf.Graph().as_default():
        table = _kv_table(list(mapping), list(mapping.values()), default=-7,
                          key_dtype=tf.int64, value_dtype=tf.int64)
        out = table.lookup(tf.constant(queries, tf.int64))
        with tf.Session() as sess:
            sess.run(tf.tables_initializer())
            got = sess.run(out)
    assert got.tolist() == [mapping.get(q, -7) for q in queries]


# -- text files ----------------------------------------------------------------------------------

def _file_table(path, *args, default=-1, **kwargs):
    return tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(path, *args, **kwargs), default)


def test_text_file_columns_and_line_numbers(graph, tmp_path):
    path = _write(tmp_path, "vocab.tsv", "apple\t3\r\nbanana\t5\ncherry\t7\n")
    by_column = _file_table(path, tf.string, 0, tf.int64, 1)
    by_line = _file_table(path, tf.string, 0, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER)
    whole = _file_table(path, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64, -1)
    reverse = _file_table(path, tf.int64, 1, tf.string, 0, default="?")
    first_two = _file_table(path, tf.string, 0, tf.int64, -1, vocab_size=2)
    query = tf.constant(["cherry", "apple", "kiwi"])
    assert graph.get_collection(tf.GraphKeys.ASSET_FILEPATHS)[0].op.type == "Const"
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        assert sess.run(by_column.lookup(query)).tolist() == [7, 3, -1]
        assert sess.run(by_line.lookup(query)).tolist() == [2, 0, -1]
        assert sess.run(whole.lookup(tf.constant(["banana\t5", "banana"]))).tolist() == [1, -1]
        assert sess.run(reverse.lookup(tf.constant([5, 4], tf.int64))).tolist() == [b"banana",
                                                                                  b"?"]
        assert sess.run(first_two.lookup(query)).tolist() == [-1, 0, -1]
        assert sess.run(first_two.size()) == 2


@pytest.mark.parametrize("text, kwargs, error, message", [
    ("a\n\nb\n", {}, errors.InvalidArgumentError, "empty line found at position 3"),
    ("a\nb\n", {"vocab_size": 5}, errors.InvalidArgumentError,
     "Invalid vocab_size in .*: expected 5 but got 2"),
    ("a\nb\na\n", {}, errors.FailedPreconditionError, "different value for same key. Key a"),
    ("a\tx\n", {"value_index": 1, "value_dtype": tf.int64}, errors.InvalidArgumentError,
     "Field x in line 0 is not a valid int64"),
    ("a\t1\nb\n", {"value_index": 1, "value_dtype": tf.int64}, errors.InvalidArgumentError,
     r"Invalid number of columns in .* line 1 \(b\) : expected at least 2 got 1"),
])
def test_text_file_errors(graph, tmp_path, text, kwargs, error, message):
    path = _write(tmp_path, "bad.txt", text)
    args = {"key_dtype": tf.string, "key_index": -2, "value_dtype": tf.int64, "value_index": -1}
    args.update(kwargs)
    table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(path, **args), -1)
    with tf.Session() as sess:
        with pytest.raises(error, match=message):
            sess.run(table.initializer)


def test_text_file_missing_and_constructor_errors(graph, tmp_path):
    table = _file_table(str(tmp_path / "nope.txt"), tf.string, -2, tf.int64, -1)
    with tf.Session() as sess:
        with pytest.raises(errors.NotFoundError, match="No such file or directory"):
            sess.run(table.initializer)
    with pytest.raises(ValueError, match="`filename` argument required"):
        tf.lookup.TextFileInitializer("", tf.string, 0, tf.int64, -1)
    with pytest.raises(ValueError, match="`key_index` should be >= -2"):
        tf.lookup.TextFileInitializer("f", tf.string, -3, tf.int64, -1)
    with pytest.raises(ValueError, match="`key_dtype` must be int64"):
        tf.lookup.TextFileInitializer("f", tf.string, -1, tf.int64, 0)
    with pytest.raises(ValueError, match="`value_dtype` must be int64"):
        tf.lookup.TextFileInitializer("f", tf.string, -2, tf.string, -1)


# -- vocabulary tables ---------------------------------------------------------------------------

def test_static_vocabulary_table_oov_buckets(graph):
    # OOV ids are vocab_size + string_to_hash_bucket_fast(key) (FarmHash, as TensorFlow).
    init = tf.lookup.KeyValueTensorInitializer(["a", "b"], [0, 1], value_dtype=tf.int64)
    table = tf.lookup.StaticVocabularyTable(init, 3)
    words = ["a", "zz", "b", "q", "zz"]
    ids = table.lookup(tf.constant(words))
    buckets = tf.strings.to_hash_bucket_fast(tf.constant(words), 3)
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        got, hashed, size = sess.run([ids, buckets, table.size()])
    assert size == 5
    assert got[[0, 2]].tolist() == [0, 1]
    np.testing.assert_array_equal(got[[1, 3, 4]], 2 + hashed[[1, 3, 4]])
    assert got[1] == got[4] and all(2 <= g < 5 for g in got[[1, 3]])


def test_static_vocabulary_table_integer_keys(graph):
    init = tf.lookup.KeyValueTensorInitializer([10, 20], [0, 1], tf.int64, tf.int64)
    table = tf.lookup.StaticVocabularyTable(init, 2)
    narrow = tf.lookup.StaticVocabularyTable(
        tf.lookup.KeyValueTensorInitializer([10, 20], [0, 1], tf.int64, tf.int64), 2,
        lookup_key_dtype=tf.int32)
    wide = table.lookup(tf.constant([20, 33, 10], tf.int64))
    small = narrow.lookup(tf.constant([10, 33]))
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        got_wide, got_small = sess.run([wide, small])
    assert got_wide[[0, 2]].tolist() == [1, 0] and 2 <= got_wide[1] < 4
    assert got_small[0] == 0 and got_small[1] == got_wide[1]


def test_static_vocabulary_table_errors(graph):
    init = tf.lookup.KeyValueTensorInitializer(["a"], [0], value_dtype=tf.int32)
    with pytest.raises(TypeError, match="Invalid `value_dtype`"):
        tf.lookup.StaticVocabularyTable(init, 1)
    ok = tf.lookup.KeyValueTensorInitializer(["a"], [0], value_dtype=tf.int64)
    with pytest.raises(ValueError, match="`num_oov_buckets` must be > 0"):
        tf.lookup.StaticVocabularyTable(ok, 0)


# -- mutable tables ------------------------------------------------------------------------------

def test_mutable_hash_table(graph):
    table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
    insert = table.insert(tf.constant(["x", "y", "x"]), tf.constant([1, 2, 3], tf.int64))
    out = table.lookup(tf.constant(["x", "y", "q"]))
    with tf.Session() as sess:
        assert sess.run(table.size()) == 0
        assert sess.run(out).tolist() == [-1, -1, -1]
        sess.run(insert)
        assert sess.run(out).tolist() == [3, 2, -1]
        sess.run(table.remove(tf.constant(["y", "never"])))
        keys, values = sess.run(table.export())
        assert sess.run(table.size()) == 1
    assert keys.tolist() == [b"x"] and values.tolist() == [3]


def test_mutable_hash_table_of_tensors(graph):
    table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, [0.0, 0.0])
    assert table.resource_handle.op.type == "MutableHashTableOfTensorsV2"
    insert = table.insert(tf.constant([5, 9], tf.int64), tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    out = table.lookup(tf.constant([9, 1], tf.int64))
    assert out.shape.as_list() == [2, 2]
    bad = table.insert(tf.constant([1], tf.int64), tf.constant([1.0]))
    with tf.Session() as sess:
        sess.run(insert)
        np.testing.assert_array_equal(sess.run(out), [[3.0, 4.0], [0.0, 0.0]])
        with pytest.raises(errors.InvalidArgumentError, match=r"Expected shape \[1, 2\]"):
            sess.run(bad)


def test_mutable_hash_table_checkpoint(graph, tmp_path):
    table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, 0, name="counts")
    insert = table.insert(tf.constant(["a", "b"]), tf.constant([4, 5], tf.int64))
    out = table.lookup(tf.constant(["a", "b", "c"]))
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(insert)
        path = saver.save(sess, str(tmp_path / "ckpt"))
    with tf.Session() as sess:
        assert sess.run(out).tolist() == [0, 0, 0]
        saver.restore(sess, path)
        assert sess.run(out).tolist() == [4, 5, 0]


def test_dense_hash_table(graph, tmp_path):
    table = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, default_value=-1,
                                                  empty_key=0, deleted_key=-1,
                                                  initial_num_buckets=8)
    assert table.resource_handle.op.type == "MutableDenseHashTableV2"
    assert table.name == "MutableDenseHashTable"
    insert = table.insert(tf.constant([5, 7], tf.int64), tf.constant([50, 70], tf.int64))
    out = table.lookup(tf.constant([5, 6, 7], tf.int64))
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(insert)
        assert sess.run(out).tolist() == [50, -1, 70]
        assert sess.run(table.size()) == 2
        path = saver.save(sess, str(tmp_path / "dense"))
        sess.run(table.remove(tf.constant([5], tf.int64)))
        assert sess.run(out).tolist() == [-1, -1, 70]
        for bad, what in [(table.insert(tf.constant([0], tf.int64), tf.constant([1], tf.int64)),
                           "empty_key"),
                          (table.lookup(tf.constant([0], tf.int64)), "empty_key"),
                          (table.remove(tf.constant([-1], tf.int64)), "deleted_key")]:
            with pytest.raises(errors.InvalidArgumentError,
                               match=f"Using the {what} as a table key is not allowed"):
                sess.run(bad)
        saver.restore(sess, path)
        assert sess.run(out).tolist() == [50, -1, 70]
    same = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, 3, 3, name="same")
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match="must differ"):
            sess.run(same.size())
