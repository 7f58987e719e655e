"""`tf.contrib.layers`' feature columns (TF 1.0-1.4) as thin adapters over `tf.feature_column`.

Each old constructor returns the `tf.feature_column` column of the same meaning, so the canned
estimators, `input_layer` and `linear_model` take them as they are:

    real_valued_column            -> numeric_column (the key "" is allowed: the features dict
                                     {"": x} of an x array fed directly, as contrib.learn did)
    sparse_column_with_hash_bucket -> categorical_column_with_hash_bucket
    sparse_column_with_keys       -> categorical_column_with_vocabulary_list
    sparse_column_with_vocabulary_file -> categorical_column_with_vocabulary_file
    sparse_column_with_integerized_feature -> ids `value mod bucket_size` (contrib's rule)
    bucketized_column, crossed_column, embedding_column, weighted_sparse_column
    one_hot_column                -> indicator_column

The per-column `combiner` of the old sparse columns is kept on the column's adapter only as
documentation: linear models combine every sparse column with one `sparse_combiner` ("sum",
contrib's default). Ids of hashed and crossed columns are TensorFlow's `tf.feature_column`
ids (FarmHash), not contrib's older ones: checkpoints of contrib.learn models do not line up.
"""

from __future__ import annotations

import collections

from tensorflux.feature_column import categorical as fc_categorical
from tensorflux.feature_column import crossed as fc_crossed
from tensorflux.feature_column import dense as fc_dense
from tensorflux.feature_column import linear as fc_linear
from tensorflux.feature_column import vocabulary_file as fc_vocabulary_file
from tensorflux.feature_column import weighted as fc_weighted
from tensorflux.framework import dtypes
from tensorflux.ops import math as math_ops
from tensorflux.ops.io import parsing as parsing_ops
from tensorflux.ops.state import variable_scope

__all__ = ["real_valued_column", "sparse_column_with_hash_bucket", "sparse_column_with_keys",
           "sparse_column_with_vocabulary_file", "sparse_column_with_integerized_feature",
           "bucketized_column", "crossed_column", "embedding_column", "one_hot_column",
           "weighted_sparse_column", "input_from_feature_columns",
           "weighted_sum_from_feature_columns", "create_feature_spec_for_parsing",
           "infer_real_valued_columns"]

_COMBINERS = ("sum", "mean", "sqrtn")


class RealValuedColumn(fc_categorical.NumericColumn):
    """A `numeric_column` whose key may be "" (an x array fed without a dict)."""

    __slots__ = ()

    @property
    def _var_scope_name(self):
        return self.key or "real_valued"


def _check_combiner(combiner, column_name):
    if combiner not in _COMBINERS:
        raise ValueError(f"combiner must be one of {_COMBINERS}; got {combiner!r} "
                         f"(column {column_name!r}).")


def real_valued_column(column_name, dimension=1, default_value=None, dtype=dtypes.float32,
                       normalizer=None):
    """A dense float column of `dimension` values per example (contrib.layers, TF 1.x).

    Args:
        column_name: the feature key; "" names the x array that contrib.learn's `fit(x=...)`
            feeds directly.
        dimension: values per example (>= 1).
        default_value: a scalar or a list of `dimension` values (parsing default).
        dtype: an integer or floating dtype.
        normalizer: a function applied to the raw tensor before the cast to float32.

    Raises:
        ValueError: dimension None (contrib's variable-length real-valued column, not
            provided) or < 1, a bad dtype or default_value.
        TypeError: column_name is not a string, or normalizer is not callable.
    """
    if not isinstance(column_name, str):
        raise TypeError(f"column_name must be a string; got {column_name!r}")
    if dimension is None:
        raise ValueError(f"real_valued_column {column_name!r}: dimension=None (a variable-"
                         f"length SparseTensor column) is not supported by tensorflux; give "
                         f"a fixed dimension.")
    if int(dimension) < 1:
        raise ValueError(f"dimension must be greater than 0. dimension: {dimension}")
    column = fc_categorical.numeric_column(column_name or "x", shape=(int(dimension),),
                                           default_value=default_value, dtype=dtype,
                                           normalizer_fn=normalizer)
    return RealValuedColumn(*column._replace(key=column_name))


def sparse_column_with_hash_bucket(column_name, hash_bucket_size, combiner="sum",
                                   dtype=dtypes.string, hash_keys=None):
    """Ids `fingerprint(str(value)) % hash_bucket_size` (`categorical_column_with_hash_bucket`).

    Raises:
        ValueError: hash_bucket_size < 1, a bad dtype or combiner, or hash_keys given
            (multi-hash columns are not provided).
    """
    _check_combiner(combiner, column_name)
    if hash_keys is not None:
        raise ValueError(f"sparse_column_with_hash_bucket {column_name!r}: hash_keys is not "
                         f"supported by tensorflux.")
    return fc_categorical.categorical_column_with_hash_bucket(column_name, hash_bucket_size,
                                                              dtype=dtype)


def sparse_column_with_keys(column_name, keys, default_value=-1, combiner="sum",
                            dtype=dtypes.string):
    """Ids by position in `keys`; unknown values get `default_value` (-1: dropped).

    Raises:
        ValueError: empty or duplicate keys, a bad dtype or combiner.
    """
    _check_combiner(combiner, column_name)
    return fc_categorical.categorical_column_with_vocabulary_list(
        column_name, tuple(keys), dtype=dtype, default_value=default_value)


def sparse_column_with_vocabulary_file(column_name, vocabulary_file, num_oov_buckets=0,
                                       vocab_size=None, default_value=-1, combiner="sum",
                                       dtype=dtypes.string):
    """Ids by line number in `vocabulary_file` (`categorical_column_with_vocabulary_file`).

    Raises:
        ValueError: a bad file, vocab_size, dtype or combiner.
    """
    _check_combiner(combiner, column_name)
    return fc_vocabulary_file.categorical_column_with_vocabulary_file(
        column_name, vocabulary_file, vocabulary_size=vocab_size,
        num_oov_buckets=num_oov_buckets, default_value=default_value, dtype=dtype)


class IntegerizedColumn(fc_categorical._CategoricalColumn, collections.namedtuple(
        "IntegerizedColumn", ["key", "bucket_size", "dtype"])):
    """Integer input whose ids are `value mod bucket_size` (contrib's integerized column)."""

    @property
    def name(self):
        return self.key

    @property
    def _num_buckets(self):
        return self.bucket_size

    @property
    def _parse_example_spec(self):
        return {self.key: parsing_ops.VarLenFeature(self.dtype)}

    def _transform_feature(self, builder):
        sp = fc_categorical._to_sparse_input(builder.get(self.key), -1)
        if not sp.dtype.is_integer:
            raise ValueError(f"sparse_column_with_integerized_feature {self.key!r}: the input "
                             f"must be integer, got {sp.dtype}")
        values = math_ops.cast(sp.values, dtypes.int64)
        return fc_categorical._with_values(sp, math_ops.floormod(values, self.bucket_size))


def sparse_column_with_integerized_feature(column_name, bucket_size, combiner="sum",
                                           dtype=dtypes.int64):
    """Integer ids taken `mod bucket_size` (negative dense entries, -1, are dropped).

    Raises:
        ValueError: bucket_size < 1, a non-integer dtype or a bad combiner.
    """
    _check_combiner(combiner, column_name)
    if bucket_size is None or int(bucket_size) < 1:
        raise ValueError(f"bucket_size must be at least 1. bucket_size: {bucket_size}, "
                         f"column_name: {column_name}")
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_integer:
        raise ValueError(f"dtype must be an integer. dtype: {dtype}, column_name: "
                         f"{column_name}")
    return IntegerizedColumn(column_name, int(bucket_size), dtype)


def bucketized_column(source_column, boundaries):
    """Buckets of a `real_valued_column` by sorted `boundaries` (`tf.feature_column`'s).

    Raises:
        ValueError: source_column is not a real-valued column, or boundaries are not sorted.
    """
    if isinstance(boundaries, tuple):
        boundaries = list(boundaries)
    return fc_categorical.bucketized_column(source_column, boundaries)


def crossed_column(columns, hash_bucket_size, combiner="sum", ckpt_to_load_from=None,
                   tensor_name_in_ckpt=None, hash_key=None):
    """The hashed cross of sparse, bucketized or crossed columns (`tf.feature_column`'s).

    A `sparse_column_with_hash_bucket` is crossed through its raw feature key (as
    tf.feature_column requires), so its ids enter the cross unhashed.

    Raises:
        ValueError: fewer than two columns, hash_bucket_size < 1, a bad combiner, or a
            checkpoint to load from (not supported).
    """
    _check_combiner(combiner, "crossed_column")
    if ckpt_to_load_from is not None or tensor_name_in_ckpt is not None:
        raise ValueError("crossed_column: ckpt_to_load_from is not supported by tensorflux; "
                         "restore the weights with a tf.train.Saver.")
    keys = [column.key if isinstance(column, fc_categorical.HashedCategoricalColumn)
            else column for column in columns]
    return fc_crossed.crossed_column(keys, hash_bucket_size, hash_key=hash_key)


def embedding_column(sparse_id_column, dimension, combiner="mean", initializer=None,
                     ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                     trainable=True):
    """Dense embeddings of a sparse column's ids (`tf.feature_column.embedding_column`).

    Raises:
        ValueError: dimension < 1, a bad combiner or initializer, or a checkpoint to load
            from (not supported).
    """
    return fc_dense.embedding_column(sparse_id_column, dimension, combiner=combiner,
                                     initializer=initializer,
                                     ckpt_to_load_from=ckpt_to_load_from,
                                     tensor_name_in_ckpt=tensor_name_in_ckpt,
                                     max_norm=max_norm, trainable=trainable)


def one_hot_column(sparse_id_column):
    """The multi-hot `[batch, num_buckets]` counts of a sparse column's ids
    (`tf.feature_column.indicator_column`).

    Raises:
        ValueError: sparse_id_column is not a sparse (categorical) column.
    """
    return fc_dense.indicator_column(sparse_id_column)


def weighted_sparse_column(sparse_id_column, weight_column_name, dtype=dtypes.float32):
    """A sparse column whose ids are weighted by the feature `weight_column_name`.

    Raises:
        ValueError: a dtype that is not numeric, or sparse_id_column not a sparse column.
    """
    return fc_weighted.weighted_categorical_column(sparse_id_column, weight_column_name,
                                                   dtype=dtype)


def input_from_feature_columns(columns_to_tensors, feature_columns, weight_collections=None,
                               trainable=True, scope=None):
    """The float32 `[batch, width]` concatenation of the dense columns
    (`tf.feature_column.input_layer` under variable scope `scope`).

    Raises:
        ValueError: no columns, a column that is not dense, or a missing feature.
    """
    with variable_scope.variable_scope(scope, default_name="input_from_feature_columns"):
        return fc_dense.input_layer(_feature_dict(columns_to_tensors), feature_columns,
                                    weight_collections=weight_collections, trainable=trainable)


def weighted_sum_from_feature_columns(columns_to_tensors, feature_columns, num_outputs,
                                      weight_collections=None, trainable=True, scope=None):
    """A linear model of the columns: `(logits [batch, num_outputs], {column: [variable]},
    bias)`.

    Raises:
        ValueError: no columns, or a missing feature.
    """
    cols_to_vars = {}
    with variable_scope.variable_scope(scope, default_name="weighted_sum_from_feature_columns"):
        logits = fc_linear.linear_model(_feature_dict(columns_to_tensors), feature_columns,
                                        units=num_outputs,
                                        weight_collections=weight_collections,
                                        trainable=trainable, cols_to_vars=cols_to_vars)
    bias = cols_to_vars.pop("bias")[0]
    return logits, cols_to_vars, bias


def create_feature_spec_for_parsing(feature_columns):
    """The `tf.parse_example` features dict of the columns (`make_parse_example_spec`).

    Raises:
        ValueError: an item is not a feature column, or conflicting specs.
    """
    if isinstance(feature_columns, dict):
        feature_columns = feature_columns.values()
    return fc_dense.make_parse_example_spec(list(feature_columns))


def infer_real_valued_columns(features):
    """One `real_valued_column` per feature, sized by the features' static shapes.

    Args:
        features: a Tensor (gives the column "") or a dict of Tensors.

    Returns:
        A list of real-valued columns.

    Raises:
        ValueError: a feature whose dtype is not numeric or whose shape is unknown.
    """
    features = _feature_dict(features)
    columns = []
    for key in sorted(features):
        tensor = features[key]
        dtype = tensor.dtype.base_dtype
        if not (dtype.is_integer or dtype.is_floating):
            raise ValueError(f"infer_real_valued_columns: feature {key!r} has dtype {dtype}, "
                             f"not a number.")
        dims = tensor.shape.as_list()[1:] if tensor.shape.ndims else []
        if any(d is None for d in dims):
            raise ValueError(f"infer_real_valued_columns: feature {key!r} has an unknown "
                             f"shape {tensor.shape}.")
        width = 1
        for d in dims:
            width *= d
        columns.append(real_valued_column(key, dimension=width, dtype=dtype))
    return columns


def _feature_dict(features):
    return features if isinstance(features, dict) else {"": features}
