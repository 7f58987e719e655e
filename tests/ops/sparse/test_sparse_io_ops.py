"""SparseTensor (op) dense (SparseDenseCwise*, `sp * x`, `sp / x`) and SparseTensor
serialization (byte-compatible with TensorFlow)."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.sparse.cwise import SparseDenseCwiseAdd
from tensorflux.ops.sparse.serialization import DeserializeSparse

COVERED_OPS = {"SparseDenseCwiseMul", "SparseDenseCwiseDiv", "SparseDenseCwiseAdd",
               "SerializeSparse", "SerializeManySparse", "DeserializeSparse",
               "DeserializeManySparse"}

IDX = np.array([[0, 0], [0, 2], [2, 1]], np.int64)
VAL = np.array([-1.0, -3.0, 2.0], np.float32)
SHAPE = np.array([3, 4], np.int64)


def _sp(values=VAL):
    return tf.SparseTensor(IDX, values, SHAPE)


# -- sparse (op) dense --------------------------------------------------------------------------

@pytest.mark.parametrize("dense", [np.float32(2.0), np.arange(1, 5, dtype=np.float32),
                                   np.array([[1.0], [2.0], [4.0]], np.float32),
                                   np.arange(1, 13, dtype=np.float32).reshape(3, 4)])
def test_sparse_times_and_over_dense(dense):
    full = np.broadcast_to(dense, SHAPE)[tuple(IDX.T)]
    product = _sp() * dense
    quotient = _sp() / dense
    assert isinstance(product, tf.SparseTensor) and product.values.op.type == \
        "SparseDenseCwiseMul"
    values = run([product.values, quotient.values, product.indices])
    np.testing.assert_allclose(values[0], VAL * full)
    np.testing.assert_allclose(values[1], VAL / full)
    np.testing.assert_array_equal(values[2], IDX)
    added = SparseDenseCwiseAdd(IDX, VAL, SHAPE, dense)
    np.testing.assert_allclose(run(added), VAL + full)


def test_sparse_dense_int_division_and_errors():
    # true division of int32 values divides as float64, as TF (-7 / 2 = -3.5)
    quotient = (_sp(np.array([-7, 7, 6], np.int32)) / np.int32(2)).values
    assert quotient.dtype == tf.float64
    np.testing.assert_array_equal(run(quotient), [-3.5, 3.5, 3.0])
    # the TF1 `div` (Python 2 `/`) keeps integers and truncates toward zero
    truncated = _sp(np.array([-7, 7, 6], np.int32)).__div__(np.int32(2)).values
    np.testing.assert_array_equal(run(truncated), [-3, 3, 3])
    with pytest.raises(errors.InvalidArgumentError, match="broadcasts dense to sparse only"):
        run((_sp() * np.ones([2, 3, 4], np.float32)).values)
    for divisor in (np.int32(0), np.float32(0)):  # a zero divisor fails for every dtype
        with pytest.raises(errors.InvalidArgumentError, match="cannot divide by zero"):
            run((_sp(np.array([1, 2, 3], divisor.dtype)) / divisor).values)


# -- serialization ------------------------------------------------------------------------------

# TensorFlow's serialize_sparse of _sp() (float32) and of a string SparseTensor.
TF_FLOAT = ["08091208120208031202080222300000000000000000000000000000000000000000000000000200"
            "00000000000002000000000000000100000000000000",
            "0801120412020803220c000080bf000040c000000040",
            "0809120412020802221003000000000000000400000000000000"]
TF_STRING = ["080912081202080212020801221000000000000000000200000000000000",
             "080712041202080222050102616263", "080912041202080122080300000000000000"]


def test_serialize_matches_tensorflow_bytes():
    blobs = run(tf.serialize_sparse(_sp()))
    assert blobs.shape == (3,)
    assert [b.hex() for b in blobs] == TF_FLOAT
    strings = tf.SparseTensor([[0], [2]], [b"a", b"bc"], [3])
    assert [b.hex() for b in run(tf.serialize_sparse(strings))] == TF_STRING


def test_deserialize_tensorflow_bytes_and_round_trip():
    blobs = [bytes.fromhex(h) for h in TF_STRING]
    value = run(tf.deserialize_many_sparse([blobs], tf.string))
    np.testing.assert_array_equal(value.indices, [[0, 0], [0, 2]])
    assert value.values.tolist() == [b"a", b"bc"]
    np.testing.assert_array_equal(value.dense_shape, [1, 3])
    many = tf.serialize_many_sparse(_sp())
    assert many.shape.as_list() == [None, 3]
    back = tf.deserialize_many_sparse(many, tf.float32, rank=2)
    assert back.indices.shape.as_list() == [None, 2]
    value = run(back)
    np.testing.assert_array_equal(value.indices, IDX)
    np.testing.assert_array_equal(value.values, VAL)
    np.testing.assert_array_equal(value.dense_shape, SHAPE)
    single = DeserializeSparse(tf.serialize_sparse(_sp()), dtype=tf.float32)
    np.testing.assert_array_equal(run(single.sparse_indices), IDX)
    stacked = DeserializeSparse(tf.stack([tf.serialize_sparse(_sp())] * 2), dtype=tf.float32)
    np.testing.assert_array_equal(run(stacked.sparse_shape), [2, 3, 4])


def test_deserialize_errors():
    many = tf.serialize_many_sparse(_sp())
    with pytest.raises(errors.InvalidArgumentError, match="requested SparseTensor of type"):
        run(tf.deserialize_many_sparse(many, tf.int32))
    with pytest.raises(errors.InvalidArgumentError, match="rank >= 2"):
        run(tf.serialize_many_sparse(tf.SparseTensor([[0]], [1.0], [2])))
    with pytest.raises(errors.InvalidArgumentError, match="parse"):
        run(tf.deserialize_many_sparse([[b"\xff\xff", b"", b""]], tf.float32))


# -- gradients ----------------------------------------------------------------------------------

def _cwise_case(fn, dense_shape):
    def build(tf):
        values = tf.placeholder(tf.float64, [3])
        dense = tf.placeholder(tf.float64, dense_shape)
        y = fn(tf.SparseTensor(IDX, values, SHAPE), dense).values
        rng = np.random.RandomState(5)
        return y, [values, dense], [rng.randn(3), rng.uniform(1, 2, dense_shape)]

    return build


GRADIENT_CASES = [
    ("SparseDenseCwiseMul", _cwise_case(lambda sp, d: sp * d, [3, 1])),
    ("SparseDenseCwiseMul", _cwise_case(lambda sp, d: sp * d, [3, 4])),
    ("SparseDenseCwiseDiv", _cwise_case(lambda sp, d: sp / d, [4])),
]
