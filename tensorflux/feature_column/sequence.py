"""Sequence feature columns and `sequence_input_layer` (TF 1.15: `tf.feature_column.sequence_*`,
`tf.contrib.feature_column.sequence_input_layer`).

A sequence categorical column holds, per example, a sequence of ids (a SparseTensor
`[batch, T]`, or `[batch, T, k]` for several ids per step). Its ids get a third dimension so
that an `embedding_column`/`indicator_column` gives one vector per step: `[batch, T, width]`
instead of one combined vector per example. `sequence_input_layer` concatenates such columns
(and `sequence_numeric_column`s) along the last axis and returns it with the per-example
sequence length (the last present step + 1; all columns must agree).
"""

import collections
import contextlib

from tensorflux.feature_column.categorical import (
    _CategoricalColumn,
    _check_key,
    _DenseColumn,
    _IdWeightPair,
    _LazyBuilder,
    categorical_column_with_hash_bucket,
    categorical_column_with_identity,
    categorical_column_with_vocabulary_list,
)
from tensorflux.feature_column.dense import EmbeddingColumn, IndicatorColumn
from tensorflux.feature_column.shared_embedding import SharedEmbeddingColumn
from tensorflux.feature_column.vocabulary_file import categorical_column_with_vocabulary_file
from tensorflux.framework import dtypes, scopes, tensor_shape
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.debug import checks as check_ops
from tensorflux.ops.io import parsing as parsing_ops
from tensorflux.ops.sparse import core as sparse_core
from tensorflux.ops.sparse.structure import sparse_reshape
from tensorflux.ops.state import variable_scope

__all__ = ["sequence_categorical_column_with_hash_bucket",
           "sequence_categorical_column_with_identity",
           "sequence_categorical_column_with_vocabulary_file",
           "sequence_categorical_column_with_vocabulary_list", "sequence_numeric_column",
           "sequence_input_layer"]


class SequenceCategoricalColumn(_CategoricalColumn, collections.namedtuple(
        "SequenceCategoricalColumn", ["categorical_column"])):
    """A categorical column read as a sequence: ids `[batch, T, ids per step]`."""

    _is_sequence = True

    @property
    def name(self):
        return self.categorical_column.name

    @property
    def _num_buckets(self):
        return self.categorical_column._num_buckets

    @property
    def _parse_example_spec(self):
        return self.categorical_column._parse_example_spec

    def _transform_feature(self, builder):
        return self.categorical_column._transform_feature(builder)

    def _get_sparse_tensors(self, builder, weight_collections=None, trainable=None):
        pair = self.categorical_column._get_sparse_tensors(builder)
        ids, weights = pair.id_tensor, pair.weight_tensor
        if ids.dense_shape.shape.as_list() != [3]:  # [batch, T] -> [batch, T, 1]
            target = array_ops.stack([ids.dense_shape[0], ids.dense_shape[1],
                                      math_ops.reduce_prod(ids.dense_shape[2:])])
            ids = sparse_reshape(ids, target)
            if weights is not None:
                weights = sparse_reshape(weights, target)
        return _IdWeightPair(ids, weights)


def _sequence(column):
    return SequenceCategoricalColumn(column)


def sequence_categorical_column_with_identity(key, num_buckets, default_value=None):
    """Sequences of integer ids in `[0, num_buckets)` (see categorical_column_with_identity)."""
    return _sequence(categorical_column_with_identity(key, num_buckets, default_value))


def sequence_categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=dtypes.string):
    """Sequences of hashed ids (see categorical_column_with_hash_bucket)."""
    return _sequence(categorical_column_with_hash_bucket(key, hash_bucket_size, dtype))


def sequence_categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None,
                                                     num_oov_buckets=0, default_value=None,
                                                     dtype=dtypes.string):
    """Sequences of ids from a vocabulary file (see categorical_column_with_vocabulary_file)."""
    return _sequence(categorical_column_with_vocabulary_file(
        key, vocabulary_file, vocabulary_size, num_oov_buckets, default_value, dtype))


def sequence_categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None,
                                                     default_value=-1, num_oov_buckets=0):
    """Sequences of ids from an in-memory vocabulary (see
    categorical_column_with_vocabulary_list)."""
    return _sequence(categorical_column_with_vocabulary_list(key, vocabulary_list, dtype,
                                                             default_value, num_oov_buckets))


class SequenceNumericColumn(_DenseColumn, collections.namedtuple(
        "SequenceNumericColumn", ["key", "shape", "default_value", "dtype", "normalizer_fn"])):
    """Sequences of numeric values: a SparseTensor `[batch, T * prod(shape)]` (or
    `[batch, T, prod(shape)]`) read as `[batch, T] + shape`."""

    _is_sequence = True

    @property
    def name(self):
        return self.key

    @property
    def _variable_shape(self):
        return tensor_shape.TensorShape(self.shape)

    @property
    def _parse_example_spec(self):
        return {self.key: parsing_ops.VarLenFeature(self.dtype)}

    def _transform_feature(self, builder):
        value = builder.get(self.key)
        if not isinstance(value, SparseTensor):
            raise ValueError(f"The corresponding Tensor of sequence_numeric_column must be a "
                             f"SparseTensor. key: {self.key}")
        if self.normalizer_fn is not None:
            value = self.normalizer_fn(value)
        return value


def sequence_numeric_column(key, shape=(1,), default_value=0.0, dtype=dtypes.float32,
                            normalizer_fn=None):
    """A sequence of numeric values of per-step `shape` (missing values: `default_value`).

    Raises:
        ValueError: bad key or shape, or a dtype that is not numeric.
        TypeError: `normalizer_fn` is not callable.
    """
    _check_key(key)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if not shape or any(not isinstance(d, int) or d < 1 for d in shape):
        raise ValueError(f"shape dimensions must be positive integers, got {shape}. "
                         f"key: {key}")
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype}, key: {key}")
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    return SequenceNumericColumn(key, shape, default_value, dtype, normalizer_fn)


def sequence_length_from_sparse_tensor(sp_tensor, num_elements=1):
    """Per row of `sp_tensor`: (its last column index + 1) / num_elements, rounded up; rows
    without entries get 0."""
    with scopes.name_scope("sequence_length"):
        rows = sp_tensor.indices[:, 0]
        lengths = math_ops.segment_max(sp_tensor.indices[:, 1] + 1, rows)
        if num_elements != 1:
            lengths = math_ops.cast(math_ops.ceil(
                math_ops.cast(lengths, dtypes.float64) / num_elements), dtypes.int64)
        missing = sp_tensor.dense_shape[:1] - array_ops.shape(lengths, out_type=dtypes.int64)
        return array_ops.concat([lengths, array_ops.zeros(missing, dtypes.int64)], 0)


def _sequence_dense(column, builder, weight_collections, trainable):
    """(dense `[batch, T, ...]`, sequence length `[batch]`) of a sequence dense column."""
    if isinstance(column, SequenceNumericColumn):
        sp = builder.get(column)
        dense = sparse_core.sparse_tensor_to_dense(
            sp, default_value=math_ops.cast(column.default_value, sp.dtype))
        target = array_ops.concat([array_ops.shape(dense)[:1], [-1],
                                   list(column.shape)], 0)
        dense = math_ops.cast(array_ops.reshape(dense, target), dtypes.float32)
        per_step = column._variable_shape.num_elements() if sp.dense_shape.shape.as_list() \
            == [2] else 1
        return dense, sequence_length_from_sparse_tensor(sp, per_step)
    source = getattr(column, "categorical_column", None)
    if not isinstance(column, (EmbeddingColumn, SharedEmbeddingColumn, IndicatorColumn)) or \
            not isinstance(source, SequenceCategoricalColumn):
        raise ValueError(f"In {type(column).__name__}: {column.name}. categorical_column must "
                         f"be of type SequenceCategoricalColumn to use sequence_input_layer. "
                         f"Suggested fix: Use one of sequence_categorical_column_with_*. Given "
                         f"(type {type(source).__name__}): {source}")
    dense = column._get_dense_tensor(builder, weight_collections=weight_collections,
                                     trainable=trainable)
    ids = source._get_sparse_tensors(builder).id_tensor
    return dense, sequence_length_from_sparse_tensor(ids)


def sequence_input_layer(features, feature_columns, weight_collections=None, trainable=True):
    """The sequence input of an RNN: `(input [batch, T, sum of widths], sequence_length
    [batch])`, built under variable scope `sequence_input_layer` (see `sequence_input`)."""
    return sequence_input(features, feature_columns, "sequence_input_layer", weight_collections,
                          trainable)


def sequence_input(features, feature_columns, scope_name, weight_collections=None,
                   trainable=True):
    """`sequence_input_layer` under a new variable scope `scope_name` (None: in the current
    scope, which `tf.keras.experimental.SequenceFeatures` opens and re-enters with reuse).

    Args:
        features: {key: SparseTensor} of sequence features.
        feature_columns: `embedding_column`s / `indicator_column`s of
            `sequence_categorical_column_with_*` columns, and `sequence_numeric_column`s.
        weight_collections, trainable: as for `input_layer`.

    Raises:
        ValueError: a column that is not a sequence dense column.
        InvalidArgumentError: (at run time) columns whose sequence lengths differ.
    """
    if isinstance(feature_columns, tuple) and hasattr(feature_columns, "_fields") or \
            not hasattr(feature_columns, "__iter__"):
        feature_columns = [feature_columns]
    columns = list(feature_columns)
    if not columns:
        raise ValueError("feature_columns must not be empty.")
    for column in columns:
        sequence = isinstance(column, SequenceNumericColumn) or isinstance(
            getattr(column, "categorical_column", None), SequenceCategoricalColumn)
        if not sequence:
            raise ValueError(f"All feature_columns must be sequence dense columns. You can wrap "
                             f"a sequence_categorical_column with an embedding_column or "
                             f"indicator_column. Given (type {type(column)}): {column}")
    outer = variable_scope.variable_scope(None, default_name=scope_name) if scope_name \
        else contextlib.nullcontext()
    with outer:
        builder = _LazyBuilder(features)
        outputs, lengths = [], []
        for column in sorted(columns, key=lambda c: c.name):
            column_scope = getattr(column, "_var_scope_name", column.name)
            with variable_scope.variable_scope(column_scope):
                dense, length = _sequence_dense(column, builder, weight_collections, trainable)
                shape = array_ops.shape(dense)
                width = column._variable_shape.num_elements()
                outputs.append(array_ops.reshape(dense, array_ops.stack([shape[0], shape[1],
                                                                         width])))
                lengths.append(length)
        length = lengths[0]
        if len(lengths) > 1:
            checks = [check_ops.assert_equal(length, other, message="sequence_length of the "
                                             "feature columns differ") for other in lengths[1:]]
            with scopes.control_dependencies(checks):
                length = array_ops.identity(length)
        return array_ops.concat(outputs, -1), length
