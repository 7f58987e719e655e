"""DType and TensorShape semantics."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.framework import dtypes
from tensorflux.framework.tensor_shape import Dimension, TensorShape, unknown_shape


@pytest.mark.parametrize("name,enum,np_type", [
    ("float32", 1, np.float32), ("float64", 2, np.float64), ("int32", 3, np.int32),
    ("uint8", 4, np.uint8), ("int16", 5, np.int16), ("int8", 6, np.int8),
    ("string", 7, np.object_), ("complex64", 8, np.complex64), ("int64", 9, np.int64),
    ("bool", 10, np.bool_), ("uint16", 17, np.uint16), ("complex128", 18, np.complex128),
    ("float16", 19, np.float16), ("uint32", 22, np.uint32), ("uint64", 23, np.uint64),
])
def test_dtype_table(name, enum, np_type):
    dtype = tf.as_dtype(name)
    assert dtype.as_datatype_enum == enum
    assert dtype.as_numpy_dtype is np_type
    assert tf.as_dtype(enum) is dtype
    assert dtype._as_ref.as_datatype_enum == enum + 100
    assert dtype._as_ref.base_dtype is dtype
    if np_type is not np.object_:
        assert tf.as_dtype(np.dtype(np_type)) is dtype


def test_dtype_properties():
    assert tf.float32.is_floating and not tf.int32.is_floating
    assert tf.int64.is_integer and tf.uint8.is_unsigned and not tf.int8.is_unsigned
    assert tf.complex64.is_complex and tf.complex64.real_dtype == tf.float32
    assert tf.int8.min == -128 and tf.uint16.max == 65535
    assert tf.float16.max == pytest.approx(65504.0)
    assert tf.bool.min is False and tf.bool.max is True
    assert tf.float32 == "float32" and tf.float32 != tf.float64
    assert tf.as_dtype(float) is tf.float32 and tf.as_dtype(int) is tf.int32
    assert repr(tf.float32_ref) == "tf.float32_ref"
    with pytest.raises(TypeError):
        tf.as_dtype("no_such_type")
    with pytest.raises(TypeError):
        tf.string.min  # noqa: B018


def test_dimension_arithmetic_and_unknowns():
    assert Dimension(3) + 2 == 5
    assert (Dimension(None) + 2).value is None
    assert Dimension(3) == 3 and Dimension(None).__eq__(3) is None
    assert Dimension(6) // 4 == 1 and int(Dimension(7)) == 7
    assert Dimension(None).merge_with(4).value == 4
    with pytest.raises(ValueError):
        Dimension(3).merge_with(4)
    with pytest.raises(ValueError):
        Dimension(-1)


def test_tensor_shape_operations():
    s = TensorShape([None, 3])
    assert s.as_list() == [None, 3] and s.ndims == 2 and not s.is_fully_defined()
    assert s[0].value is None and s[1].value == 3 and s[1:].as_list() == [3]
    assert s.merge_with([2, None]).as_list() == [2, 3]
    assert s.is_compatible_with([5, 3]) and not s.is_compatible_with([5, 4])
    assert not s.is_compatible_with([1, 2, 3])
    assert s.concatenate([7]).as_list() == [None, 3, 7]
    assert unknown_shape().ndims is None and unknown_shape(2).as_list() == [None, None]
    assert TensorShape(None).merge_with(s) == s
    assert TensorShape([2, 3]).num_elements() == 6 and s.num_elements() is None
    assert repr(TensorShape([1, None])) == "TensorShape([1, None])"
    assert str(TensorShape([1, None])) == "(1, ?)"
    with pytest.raises(ValueError):
        s.with_rank(3)
    with pytest.raises(ValueError):
        TensorShape(None).as_list()
    with pytest.raises(ValueError):
        s.merge_with([2, 4])
    proto = TensorShape([None, 4]).as_proto()
    assert [d.size for d in proto.dim] == [-1, 4]
    assert TensorShape(proto).as_list() == [None, 4]


@given(st.lists(st.one_of(st.none(), st.integers(0, 5)), max_size=4),
       st.lists(st.one_of(st.none(), st.integers(0, 5)), max_size=4))
def test_merge_is_compatible_and_most_specific(a, b):
    sa, sb = TensorShape(a), TensorShape(b)
    if sa.is_compatible_with(sb):
        merged = sa.merge_with(sb)
        assert merged.is_compatible_with(sa) and merged.is_compatible_with(sb)
        assert sum(d is None for d in merged.dims) <= min(sum(d is None for d in a),
                                                          sum(d is None for d in b))
    else:
        with pytest.raises(ValueError):
            sa.merge_with(sb)


def test_string_dtype_conversion():
    assert dtypes.as_dtype(np.dtype("S3")) is tf.string
    assert dtypes.as_dtype(np.dtype("U3")) is tf.string


def test_dims_is_a_list_like_tf1():
    assert tf.TensorShape([]).dims == []
    dims = tf.TensorShape([4, None, 2]).dims
    assert isinstance(dims, list) and [d.value for d in dims] == [4, None, 2]
    assert dims[0] == 4 and dims[2] * 3 == 6 and tf.TensorShape(None).dims is None
    # As TF1: an unknown entry is Dimension(None), so `shape.dims[0].value` always works.
    assert isinstance(dims[1], tf.Dimension) and dims[1].value is None
    assert tf.placeholder(tf.float32, [None, 3]).get_shape().dims[0].value is None


def test_dtype_built_from_a_type_enum_is_the_canonical_dtype():
    # TF1's public constructor `tf.DType(type_enum)`, as SignatureDef readers use it.
    import copy

    for dtype in (tf.float32, tf.int64, tf.string, tf.bool, tf.float32_ref):
        made = tf.DType(dtype.as_datatype_enum)
        assert made is dtype and made == dtype and made.name == dtype.name
    assert tf.DType(type_enum=9) is tf.int64
    assert copy.deepcopy(tf.float16) == tf.float16
    for bad in (999, 0, True, "float32", 1.0):
        with pytest.raises(TypeError, match="type_enum"):
            tf.DType(bad)
