"""Categorical and numeric feature columns (`tf.feature_column`, TF1 semantics).

A column is an immutable description of how to turn `features[key]` into a tensor. Dense
columns give a float `[batch, variable_shape]` tensor through `_get_dense_tensor`; categorical
columns give an int64 `SparseTensor` of ids through `_get_sparse_tensors`. `_LazyBuilder`
memoises the transformation of each column within one `input_layer` call, so a source column
shared by several derived columns is transformed once.
"""

import collections

import numpy as np

from tensorflux.framework import dtypes, scopes, tensor_shape
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.data_flow import lookup as lookup_ops
from tensorflux.ops.debug import checks as check_ops
from tensorflux.ops.io import parsing as parsing_ops
from tensorflux.ops.strings import conversion as strings_conversion
from tensorflux.ops.strings import hashing as strings_hashing

__all__ = ["bucketized_column", "categorical_column_with_hash_bucket",
           "categorical_column_with_identity", "categorical_column_with_vocabulary_list",
           "numeric_column"]


class _LazyBuilder:
    """Transforms each column (or raw key) at most once per builder."""

    def __init__(self, features):
        self._features = dict(features)
        self._cache = {}

    def get(self, key):
        # Columns are namedtuples, equal to any tuple of equal fields: key the cache by type too.
        cache_key = (type(key), key)
        if cache_key in self._cache:
            return self._cache[cache_key]
        if isinstance(key, str):
            if key not in self._features:
                raise ValueError(f"The feature {key!r} is not in features dictionary "
                                 f"(keys: {sorted(self._features)}).")
            value = self._features[key]
            if not isinstance(value, SparseTensor):
                value = convert_to_tensor(value)
            self._cache[cache_key] = value
            return value
        value = key._transform_feature(self)
        self._cache[cache_key] = value
        return value


_IdWeightPair = collections.namedtuple("IdWeightPair", ["id_tensor", "weight_tensor"])


def _to_sparse_input(tensor, ignore_value):
    """`tensor` as a SparseTensor; a dense input drops entries equal to `ignore_value`."""
    if isinstance(tensor, SparseTensor):
        return tensor
    if tensor.shape.ndims == 1:
        tensor = array_ops.expand_dims(tensor, -1)
    indices = math_ops.where(math_ops.not_equal(tensor,
                                                array_ops.constant(ignore_value, tensor.dtype)))
    return SparseTensor(indices, array_ops.gather_nd(tensor, indices),
                        array_ops.shape(tensor, out_type=dtypes.int64))


def _ignore_value(dtype):
    return "" if dtype == dtypes.string else -1


def _vocabulary_keys(builder, key, dtype):
    """The sparse input of a vocabulary column and its values, checked against `dtype`.

    Raises:
        ValueError: integer keys for a string column or the reverse.
    """
    sp = _to_sparse_input(builder.get(key), _ignore_value(dtype))
    if dtype.is_integer != sp.values.dtype.is_integer:
        raise ValueError(f"Column dtype and SparseTensors dtype must be compatible. "
                         f"key: {key}, column dtype: {dtype}, tensor dtype: {sp.values.dtype}")
    return sp, sp.values


def _with_values(sp, values):
    return SparseTensor(sp.indices, values, sp.dense_shape)


def _check_key(key):
    if not isinstance(key, str) or not key:
        raise ValueError(f"key must be a non-empty string, got {key!r}.")


class _DenseColumn:
    """A column whose `_get_dense_tensor` is a float tensor `[batch] + _variable_shape`."""


class _CategoricalColumn:
    """A column whose `_get_sparse_tensors` is an `_IdWeightPair` of int64 ids."""

    def _get_sparse_tensors(self, builder, weight_collections=None, trainable=None):
        return _IdWeightPair(builder.get(self), None)


class NumericColumn(_DenseColumn, collections.namedtuple(
        "NumericColumn", ["key", "shape", "default_value", "dtype", "normalizer_fn"])):
    """Dense column of `features[key]` cast to float32, optionally normalised."""

    @property
    def name(self):
        return self.key

    @property
    def _variable_shape(self):
        return tensor_shape.TensorShape(self.shape)

    @property
    def _parse_example_spec(self):
        return {self.key: parsing_ops.FixedLenFeature(self.shape, self.dtype, self.default_value)}

    def _transform_feature(self, builder):
        value = builder.get(self.key)
        if isinstance(value, SparseTensor):
            raise ValueError(f"The corresponding Tensor of numerical column must be a Tensor. "
                             f"SparseTensor is not supported. key: {self.key}")
        if self.normalizer_fn is not None:
            value = self.normalizer_fn(value)
        return math_ops.cast(value, dtypes.float32)

    def _get_dense_tensor(self, builder, weight_collections=None, trainable=None):
        return builder.get(self)


def numeric_column(key, shape=(1,), default_value=None, dtype=dtypes.float32, normalizer_fn=None):
    """A dense float column for `features[key]` of per-example `shape`.

    `default_value` is kept for parsing specs (it is not used when the feature is present).
    `normalizer_fn` is applied to the raw tensor before the cast to float32.

    Raises:
        ValueError: bad key, shape, dtype, or a default_value incompatible with `shape`.
        TypeError: `normalizer_fn` is not callable.
    """
    _check_key(key)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if not shape or any(not isinstance(d, (int, np.integer)) or d < 1 for d in shape):
        raise ValueError(f"shape dimensions must be positive integers, got {shape}. "
                         f"key: {key}")
    shape = tuple(int(d) for d in shape)
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype}, key: {key}")
    if default_value is not None:
        arr = np.asarray(default_value, dtype=dtype.as_numpy_dtype)
        if arr.ndim == 0:
            default_value = (arr.item(),) * int(np.prod(shape))
            default_value = np.reshape(default_value, shape).tolist()
        elif arr.shape != shape:
            raise ValueError(f"The shape of default_value must be equal to given shape. "
                             f"default_value: {default_value}, shape: {shape}, key: {key}")
        default_value = _nested_tuple(np.reshape(default_value, shape).tolist())
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    return NumericColumn(key, shape, default_value, dtype, normalizer_fn)


def _nested_tuple(value):
    return tuple(_nested_tuple(v) for v in value) if isinstance(value, list) else value


class BucketizedColumn(_DenseColumn, _CategoricalColumn, collections.namedtuple(
        "BucketizedColumn", ["source_column", "boundaries"])):
    """Buckets a numeric column: bucket i holds boundaries[i-1] <= x < boundaries[i]."""

    @property
    def name(self):
        return f"{self.source_column.name}_bucketized"

    @property
    def _num_per_element(self):
        return len(self.boundaries) + 1

    @property
    def _parse_example_spec(self):
        return self.source_column._parse_example_spec

    @property
    def _variable_shape(self):
        return tensor_shape.TensorShape(tuple(self.source_column.shape) + (self._num_per_element,))

    @property
    def _num_buckets(self):
        return int(np.prod(self.source_column.shape)) * self._num_per_element

    def _transform_feature(self, builder):
        value = builder.get(self.source_column)
        bounds = array_ops.constant(np.asarray(self.boundaries, np.float32))
        ge = math_ops.greater_equal(array_ops.expand_dims(value, -1), bounds)
        return math_ops.reduce_sum(math_ops.cast(ge, dtypes.int64), axis=-1)

    def _get_dense_tensor(self, builder, weight_collections=None, trainable=None):
        return array_ops.one_hot(builder.get(self), self._num_per_element, 1.0, 0.0,
                                 dtype=dtypes.float32)

    def _get_sparse_tensors(self, builder, weight_collections=None, trainable=None):
        buckets = builder.get(self)
        dim = int(np.prod(self.source_column.shape))
        flat = array_ops.reshape(buckets, [-1, dim])
        offsets = array_ops.constant(np.arange(dim, dtype=np.int64) * self._num_per_element)
        ids = array_ops.reshape(flat + offsets, [-1])
        batch = array_ops.shape(flat, out_type=dtypes.int64)[0]
        rows = array_ops.reshape(array_ops.tile(array_ops.expand_dims(math_ops.range(batch), 1),
                                                [1, dim]), [-1])
        cols = array_ops.tile(math_ops.range(dim, dtype=dtypes.int64),
                              array_ops.reshape(batch, [1]))
        indices = array_ops.stack([rows, cols], axis=1)
        dense_shape = array_ops.stack([batch, array_ops.constant(dim, dtypes.int64)])
        return _IdWeightPair(SparseTensor(indices, ids, dense_shape), None)


def bucketized_column(source_column, boundaries):
    """Discretises the numeric `source_column` by the sorted float `boundaries`.

    As a dense column it is a one-hot `[batch] + source_shape + [len(boundaries)+1]`; as a
    categorical column element j of bucket b has id `b + j * (len(boundaries)+1)`.

    Raises:
        ValueError: source_column is not a numeric_column or boundaries are not sorted.
    """
    if not isinstance(source_column, NumericColumn):
        raise ValueError(f"source_column must be a column generated with numeric_column(). "
                         f"Given: {source_column}")
    if len(source_column.shape) > 1:
        raise ValueError(f"source_column must be one-dimensional column. "
                         f"Given: {source_column}")
    if not boundaries or not isinstance(boundaries, (list, tuple)):
        raise ValueError("boundaries must be a sorted list.")
    if any(boundaries[i] >= boundaries[i + 1] for i in range(len(boundaries) - 1)):
        raise ValueError("boundaries must be a sorted list.")
    return BucketizedColumn(source_column, tuple(float(b) for b in boundaries))


class IdentityCategoricalColumn(_CategoricalColumn, collections.namedtuple(
        "IdentityCategoricalColumn", ["key", "number_buckets", "default_value"])):
    """Integer input used directly as ids in [0, num_buckets)."""

    @property
    def name(self):
        return self.key

    @property
    def _num_buckets(self):
        return self.number_buckets

    @property
    def _parse_example_spec(self):
        return {self.key: parsing_ops.VarLenFeature(dtypes.int64)}

    def _transform_feature(self, builder):
        sp = _to_sparse_input(builder.get(self.key), -1)
        if not sp.dtype.is_integer:
            raise ValueError(f"Invalid input, not integer. key: {self.key} dtype: {sp.dtype}")
        values = math_ops.cast(sp.values, dtypes.int64)
        if self.default_value is None:
            with scopes.control_dependencies([
                    check_ops.assert_greater_equal(values, array_ops.constant(0, dtypes.int64),
                                                   message=f"Bucket index for {self.key} < 0"),
                    check_ops.assert_less(values,
                                          array_ops.constant(self.number_buckets, dtypes.int64),
                                          message=f"Bucket index for {self.key} >= num_buckets")]):
                values = array_ops.identity(values)
        else:
            bad = math_ops.logical_or(math_ops.less(values, 0), math_ops.greater_equal(values,
                                                                                       self.number_buckets))
            values = math_ops.where(bad, array_ops.fill(array_ops.shape(values), array_ops.constant(
                self.default_value, dtypes.int64)), values)
        return _with_values(sp, values)


def categorical_column_with_identity(key, num_buckets, default_value=None):
    """Integer ids in [0, num_buckets) taken as-is; out-of-range ids map to `default_value`.

    Without `default_value`, an out-of-range id fails at run time (InvalidArgumentError).

    Raises:
        ValueError: num_buckets < 1 or default_value outside [0, num_buckets).
    """
    _check_key(key)
    if num_buckets < 1:
        raise ValueError(f"num_buckets {num_buckets} < 1, column_name {key}")
    if default_value is not None and not 0 <= default_value < num_buckets:
        raise ValueError(f"default_value {default_value} not in range [0, {num_buckets}), "
                         f"column_name {key}")
    return IdentityCategoricalColumn(key, int(num_buckets), default_value)


class VocabularyListCategoricalColumn(_CategoricalColumn, collections.namedtuple(
        "VocabularyListCategoricalColumn",
        ["key", "vocabulary_list", "dtype", "default_value", "num_oov_buckets"])):
    """Maps each value to its index in `vocabulary_list`; unknown values to OOV buckets."""

    @property
    def name(self):
        return self.key

    @property
    def _num_buckets(self):
        return len(self.vocabulary_list) + self.num_oov_buckets

    @property
    def _parse_example_spec(self):
        return {self.key: parsing_ops.VarLenFeature(self.dtype)}

    def _transform_feature(self, builder):
        sp, keys = _vocabulary_keys(builder, self.key, self.dtype)
        if keys.dtype.is_integer:
            keys = math_ops.cast(keys, dtypes.int64)
            vocab = np.asarray(self.vocabulary_list, np.int64)
        else:
            vocab = np.asarray([v.encode() if isinstance(v, str) else v
                                for v in self.vocabulary_list], object)
        size = len(self.vocabulary_list)
        with scopes.name_scope(f"{self.key}_lookup"):
            table = lookup_ops.StaticHashTable(lookup_ops.KeyValueTensorInitializer(
                array_ops.constant(vocab,
                                   keys.dtype), array_ops.constant(np.arange(size,
                                                                             dtype=np.int64))), -1)
            ids = _with_oov(keys, table.lookup(keys), size, self.num_oov_buckets,
                            self.default_value)
        return _with_values(sp, ids)


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None, default_value=-1,
                                            num_oov_buckets=0):
    """Ids from an in-memory vocabulary; unknown values get `default_value` or an OOV bucket.

    With `num_oov_buckets` > 0, an unknown value v gets id
    `len(vocabulary_list) + fingerprint64(str(v)) % num_oov_buckets` (TF's ids);
    `default_value` must then be -1.

    Raises:
        ValueError: empty or duplicate vocabulary, bad dtype, or conflicting OOV settings.
    """
    _check_key(key)
    if vocabulary_list is None or len(vocabulary_list) < 1:
        raise ValueError(f"vocabulary_list {vocabulary_list} must be non-empty, "
                         f"column_name: {key}")
    vocabulary_list = tuple(vocabulary_list)
    if len(set(vocabulary_list)) != len(vocabulary_list):
        raise ValueError(f"Duplicate keys in vocabulary_list {vocabulary_list}, "
                         f"column_name: {key}")
    inferred = dtypes.string if isinstance(vocabulary_list[0], (str, bytes)) else dtypes.int64
    dtype = inferred if dtype is None else dtypes.as_dtype(dtype)
    if dtype.is_integer != inferred.is_integer:
        raise ValueError(f"dtype {dtype} and vocabulary dtype {inferred} do not match, "
                         f"column_name: {key}")
    if dtype != dtypes.string and not dtype.is_integer:
        raise ValueError(f"dtype {dtype} must be string or integer, column_name: {key}")
    if num_oov_buckets < 0:
        raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    if num_oov_buckets and default_value not in (None, -1):
        raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
    default_value = -1 if default_value is None else default_value
    return VocabularyListCategoricalColumn(key, vocabulary_list, dtype, int(default_value),
                                           int(num_oov_buckets))


def _with_oov(keys, ids, vocabulary_size, num_oov_buckets, default_value):
    """Table ids with the misses (-1) replaced: by `vocabulary_size + hash(key) %
    num_oov_buckets` (FarmHash of the key's string, as TF) or by `default_value`."""
    missing = math_ops.equal(ids, -1)
    if num_oov_buckets:
        text = keys if keys.dtype == dtypes.string else strings_conversion.as_string(keys)
        oov = vocabulary_size + strings_hashing.string_to_hash_bucket_fast(text, num_oov_buckets)
    else:
        oov = array_ops.fill(array_ops.shape(ids), array_ops.constant(default_value, dtypes.int64))
    return math_ops.where(missing, oov, ids)


class HashedCategoricalColumn(_CategoricalColumn, collections.namedtuple(
        "HashedCategoricalColumn", ["key", "hash_bucket_size", "dtype"])):
    """Ids `hash(str(value)) % hash_bucket_size`."""

    @property
    def name(self):
        return self.key

    @property
    def _num_buckets(self):
        return self.hash_bucket_size

    @property
    def _parse_example_spec(self):
        return {self.key: parsing_ops.VarLenFeature(self.dtype)}

    def _transform_feature(self, builder):
        sp = _to_sparse_input(builder.get(self.key), _ignore_value(self.dtype))
        if sp.dtype != dtypes.string and not sp.dtype.is_integer:
            raise ValueError(f"SparseColumn input must be a SparseTensor with dtype integer "
                             f"or string. dtype: {sp.dtype}")
        text = sp.values if sp.dtype == dtypes.string else strings_conversion.as_string(sp.values)
        return _with_values(sp,
                            strings_hashing.string_to_hash_bucket_fast(text, self.hash_bucket_size))


def categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=dtypes.string):
    """Ids by hashing: `string_to_hash_bucket_fast(as_string(value), hash_bucket_size)`.

    The hash is TensorFlow's (FarmHash Fingerprint64), so ids equal the ones TensorFlow
    assigns and embeddings trained there line up.

    Raises:
        ValueError: hash_bucket_size < 1 or dtype neither string nor integer.
    """
    _check_key(key)
    if hash_bucket_size is None or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be at least 1. hash_bucket_size: "
                         f"{hash_bucket_size}, key: {key}")
    dtype = dtypes.as_dtype(dtype)
    if dtype != dtypes.string and not dtype.is_integer:
        raise ValueError(f"dtype must be string or integer. dtype: {dtype}, column_name: {key}")
    return HashedCategoricalColumn(key, int(hash_bucket_size), dtype)

