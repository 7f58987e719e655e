"""`tf.feature_column.categorical_column_with_vocabulary_file` (TF1 semantics).

Ids are the line numbers of a vocabulary file (one key per line), looked up in a hash table
initialised from the file when `tf.tables_initializer()` runs; unknown keys get `default_value`
or one of `num_oov_buckets` FarmHash buckets after the vocabulary (TensorFlow's ids).
"""

import collections

from tensorflux.feature_column.categorical import (
    _CategoricalColumn,
    _check_key,
    _vocabulary_keys,
    _with_oov,
    _with_values,
)
from tensorflux.framework import dtypes, scopes
from tensorflux.ops import math as math_ops
from tensorflux.ops.data_flow import lookup as lookup_ops
from tensorflux.ops.io import parsing as parsing_ops
from tensorflux.platform import gfile

__all__ = ["categorical_column_with_vocabulary_file"]


class VocabularyFileCategoricalColumn(_CategoricalColumn, collections.namedtuple(
        "VocabularyFileCategoricalColumn",
        ["key", "vocabulary_file", "vocabulary_size", "num_oov_buckets", "default_value",
         "dtype"])):
    """Maps each value to its line in `vocabulary_file`; unknown values to OOV buckets."""

    @property
    def name(self):
        return self.key

    @property
    def _num_buckets(self):
        return self.vocabulary_size + self.num_oov_buckets

    @property
    def _parse_example_spec(self):
        return {self.key: parsing_ops.VarLenFeature(self.dtype)}

    def _transform_feature(self, builder):
        sp, keys = _vocabulary_keys(builder, self.key, self.dtype)
        key_dtype = dtypes.string
        if keys.dtype.is_integer:
            keys, key_dtype = math_ops.cast(keys, dtypes.int64), dtypes.int64
        with scopes.name_scope(f"{self.key}_lookup"):
            table = lookup_ops.StaticHashTable(lookup_ops.TextFileInitializer(
                self.vocabulary_file, key_dtype, lookup_ops.TextFileIndex.WHOLE_LINE,
                dtypes.int64, lookup_ops.TextFileIndex.LINE_NUMBER,
                vocab_size=self.vocabulary_size), -1)
            ids = _with_oov(keys, table.lookup(keys), self.vocabulary_size,
                            self.num_oov_buckets, self.default_value)
        return _with_values(sp, ids)


def categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None,
                                            num_oov_buckets=0, default_value=None,
                                            dtype=dtypes.string):
    """Ids from a vocabulary file: the value on line i (from 0) gets id i.

    Args:
        key: the feature key.
        vocabulary_file: the file, one key per line (string keys, or integers for an
            integer `dtype`).
        vocabulary_size: how many lines to use; default: the number of lines in the file.
        num_oov_buckets: unknown values go to ids `[vocabulary_size, vocabulary_size +
            num_oov_buckets)` by FarmHash of their string (TF's ids).
        default_value: the id of unknown values without OOV buckets (default -1: dropped).
        dtype: string or an integer type.

    Raises:
        ValueError: no file, a missing file (when the size must be counted), vocabulary_size
            < 1, num_oov_buckets < 0 or given together with default_value, or a bad dtype.
    """
    if not vocabulary_file:
        raise ValueError(f"Missing vocabulary_file in {key}.")
    if vocabulary_size is None:
        if not gfile.exists(vocabulary_file):
            raise ValueError(f"vocabulary_file in {key} does not exist.")
        with gfile.GFile(vocabulary_file) as handle:
            vocabulary_size = sum(1 for _ in handle)
    if vocabulary_size < 1:
        raise ValueError(f"Invalid vocabulary_size in {key}.")
    if num_oov_buckets:
        if default_value is not None:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    dtype = dtypes.as_dtype(dtype)
    if dtype != dtypes.string and not dtype.is_integer:
        raise ValueError(f"dtype {dtype} must be string or integer. column_name: {key}")
    _check_key(key)
    return VocabularyFileCategoricalColumn(
        key, vocabulary_file, int(vocabulary_size), int(num_oov_buckets or 0),
        -1 if default_value is None else int(default_value), dtype)
