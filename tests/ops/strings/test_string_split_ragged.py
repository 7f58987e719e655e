"""tf.strings.split / tf.string_split with RaggedTensor results, over inputs of any rank and
RaggedTensor inputs, against Python's bytes.split; the SparseTensor form of a rank-2 split is
the ragged result's bounding-box sparse form."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.ops.strings.text import split_v2


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _py_split(value, sep=None, maxsplit=-1):
    if isinstance(value, bytes):
        return value.split(sep, maxsplit)
    return [_py_split(v, sep, maxsplit) for v in value]


def _run(fetch):
    with tf.Session() as sess:
        return sess.run(fetch)


@pytest.mark.parametrize("value, sep, maxsplit", [
    ([b"a b  c", b"", b" d "], None, -1),
    ([b"1,2,,3", b"4"], b",", -1),
    ([b"1<>2<>3", b"<>"], b"<>", 1),
    ([[b"1,2,3", b"4"], [b"5,6", b"7,8,9"]], b",", -1),
    ([[[b"x y"], [b""]], [[b"z"], [b"u v w"]]], None, -1),
    ([[], []], b",", -1),
])
def test_dense_inputs_of_any_rank_split_as_python_does(value, sep, maxsplit):
    tensor = tf.constant(value, tf.string) if np.size(value) else \
        tf.constant(np.zeros(np.shape(value), object), tf.string)
    ragged = tf.strings.split(tensor, sep=sep, maxsplit=maxsplit, result_type="RaggedTensor")
    got = _run(ragged)
    assert got.to_list() == _py_split(value, sep, maxsplit)
    assert ragged.ragged_rank == len(np.shape(value))


def test_ragged_inputs_keep_their_rows_and_scalars_give_a_token_vector():
    rows = [[[b"1,2,3", b"4"], [b"5,6"]], [[b"7,8,9"]], []]
    ragged = tf.ragged.constant(rows, dtype=tf.string)
    got = _run(tf.strings.split(ragged, sep=",", result_type="RaggedTensor"))
    assert got.to_list() == [[[[b"1", b"2", b"3"], [b"4"]], [[b"5", b"6"]]],
                             [[[b"7", b"8", b"9"]]], []]
    tokens = _run(split_v2(tf.constant("a bc  d")))
    assert tokens.tolist() == [b"a", b"bc", b"d"]
    # TF1's tf.strings.split treats a scalar as a vector of one string.
    assert _run(tf.strings.split("a b", result_type="RaggedTensor")).to_list() == [[b"a", b"b"]]


def test_sparse_result_of_a_matrix_is_the_bounding_box_of_the_ragged_one():
    value = [[b"a b c", b"d"], [b"", b"e f"]]
    sparse = _run(tf.strings.split(tf.constant(value), result_type="SparseTensor"))
    want = _py_split(value)
    indices = [[i, j, k] for i, row in enumerate(want) for j, toks in enumerate(row)
               for k in range(len(toks))]
    assert sparse.indices.tolist() == indices
    assert sparse.values.tolist() == [t for row in want for toks in row for t in toks]
    assert sparse.dense_shape.tolist() == [2, 2, 3]


def test_string_split_ragged_result_and_bad_result_type():
    got = _run(tf.string_split(["a,b", "", "c"], sep=",", result_type="RaggedTensor"))
    assert got.to_list() == [[b"a", b"b"], [], [b"c"]]
    with pytest.raises(ValueError, match="result_type"):
        tf.strings.split(["a"], result_type="Dense")


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.lists(st.integers(-5, 5), max_size=3), max_size=3), min_size=1,
                max_size=4))
def test_to_sparse_lists_every_value_in_row_major_order(rows):
    assume(any(inner for row in rows for inner in row))  # a scalar fixes the nesting depth
    ragged = tf.ragged.constant(rows, dtype=tf.int32, ragged_rank=2)
    sparse = _run(ragged.to_sparse())
    flat = [(i, j, k, v) for i, row in enumerate(rows) for j, inner in enumerate(row)
            for k, v in enumerate(inner)]
    assert sparse.indices.tolist() == [list(f[:3]) for f in flat]
    assert sparse.values.tolist() == [f[3] for f in flat]
    width = max([len(r) for r in rows])
    depth = max([len(inner) for r in rows for inner in r] + [0])
    assert sparse.dense_shape.tolist() == [len(rows), width, depth]


def test_to_sparse_with_dense_inner_dimensions_and_constant_without_ragged_rank():
    ragged = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
    sparse = _run(ragged.to_sparse())
    dense = np.zeros(sparse.dense_shape, np.int32)
    dense[tuple(sparse.indices.T)] = sparse.values
    np.testing.assert_array_equal(dense, [[[1, 2], [3, 4]], [[5, 6], [0, 0]]])
    plain = tf.ragged.constant([[1, 2], [3, 4]], ragged_rank=0)
    assert isinstance(plain, tf.Tensor) and _run(plain).tolist() == [[1, 2], [3, 4]]
