"""`tf.contrib.lookup`: TF 1.x's table API, on the core tables of `tf.lookup`.

Vocabulary tables map keys to ids (`index_table_from_file` / `index_table_from_tensor`, with
optional out-of-vocabulary buckets hashed as TensorFlow hashes them) and ids back to strings
(`index_to_string_table_from_*`); `HashTable`, `MutableHashTable` and `MutableDenseHashTable`
are the TF1 names of the static and mutable tables.

Example:
    >>> table = tf.contrib.lookup.index_table_from_tensor(["emerson", "lake"], num_oov_buckets=1)
    >>> ids = table.lookup(tf.constant(["lake", "palmer"]))   # [1, 2] after tables_initializer
"""

from __future__ import annotations

import collections

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.data_flow.lookup import (
    KeyValueTensorInitializer,
    LookupInterface,
    StaticHashTable,
    TextFileIndex,
    TextFileInitializer,
    _key_tensor,
    _rewrap,
    tables_initializer,
)
from tensorflux.ops.data_flow.lookup_mutable import DenseHashTable as MutableDenseHashTable
from tensorflux.ops.data_flow.lookup_mutable import MutableHashTable
from tensorflux.ops.math import binary as binary_ops
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.math import sequence as sequence_ops
from tensorflux.ops.math.casting import cast
from tensorflux.ops.strings import conversion as string_ops
from tensorflux.ops.strings import hashing

__all__ = ["FastHashSpec", "HashTable", "HasherSpec", "IdTableWithHashBuckets",
           "KeyValueTensorInitializer", "LookupInterface", "MutableDenseHashTable",
           "MutableHashTable", "StrongHashSpec", "TextFileIdTableInitializer", "TextFileIndex",
           "TextFileInitializer", "TextFileStringTableInitializer", "index_table_from_file",
           "index_table_from_tensor", "index_to_string", "index_to_string_table_from_file",
           "index_to_string_table_from_tensor", "string_to_index", "tables_initializer"]


class HashTable(StaticHashTable):
    """TF1's name of the static table: `HashTable(initializer, default_value, shared_name=None,
    name=None)`; `table.init` is its initializer op."""

    def __init__(self, initializer, default_value, shared_name=None, name=None):
        super().__init__(initializer, default_value, name=name, shared_name=shared_name)


class TextFileIdTableInitializer(TextFileInitializer):
    """Fills a table of ids from a vocabulary file: key = the line (or a column), value = its
    line number."""

    def __init__(self, filename, key_column_index=TextFileIndex.WHOLE_LINE,
                 value_column_index=TextFileIndex.LINE_NUMBER, vocab_size=None, delimiter="\t",
                 name="text_file_id_table_init", key_dtype=dtypes.string):
        super().__init__(filename, key_dtype, key_column_index, dtypes.int64, value_column_index,
                         vocab_size=vocab_size, delimiter=delimiter, name=name)


class TextFileStringTableInitializer(TextFileInitializer):
    """Fills a table of strings from a vocabulary file: key = the line number, value = the line
    (or a column)."""

    def __init__(self, filename, key_column_index=TextFileIndex.LINE_NUMBER,
                 value_column_index=TextFileIndex.WHOLE_LINE, vocab_size=None, delimiter="\t",
                 name="text_file_string_table_init"):
        super().__init__(filename, dtypes.int64, key_column_index, dtypes.string,
                         value_column_index, vocab_size=vocab_size, delimiter=delimiter,
                         name=name)


HasherSpec = collections.namedtuple("HasherSpec", ["hasher", "key"])
FastHashSpec = HasherSpec("fasthash", None)


class StrongHashSpec(HasherSpec):
    """A keyed hash (SipHash-2-4) for out-of-vocabulary buckets; `key` is two integers."""

    __slots__ = ()

    def __new__(cls, key):
        if len(key) != 2:
            raise ValueError(f"key must have size 2, got {len(key)}.")
        if not isinstance(key[0], (int, np.integer)) or not isinstance(key[1], (int, np.integer)):
            raise TypeError(f"Invalid key {key}. Must be unsigned integer values.")
        return super().__new__(cls, "stronghash", key)


def _hash_fn(hasher_spec):
    if not isinstance(hasher_spec, HasherSpec):
        raise TypeError(f"hasher_spec must be of type HasherSpec, got {type(hasher_spec)}")
    if hasher_spec.hasher == "fasthash":
        return hashing.string_to_hash_bucket_fast
    if hasher_spec.hasher == "legacy":
        return hashing.string_to_hash_bucket
    if hasher_spec.hasher == "stronghash":
        return lambda text, num_buckets, name=None: hashing.string_to_hash_bucket_strong(
            text, num_buckets, list(hasher_spec.key), name=name)
    raise ValueError(f"Unknown hasher {hasher_spec.hasher}")


class IdTableWithHashBuckets(LookupInterface):
    """Ids from `table`, and for keys it lacks one of `num_oov_buckets` buckets after them.

    A key missing from `table` (its lookup gives the table's default value) gets
    `table.size() + hash(key) % num_oov_buckets`; integer keys are hashed through their decimal
    strings. With `table=None` every key is hashed.

    Raises:
        ValueError: neither a table nor buckets, or a negative bucket count.
        TypeError: integer/string keys that do not fit the table.
    """

    def __init__(self, table, num_oov_buckets, hasher_spec=FastHashSpec, name=None,
                 key_dtype=None):
        if table is None and not num_oov_buckets:
            raise ValueError("Must specify either table or oov_buckets.")
        if num_oov_buckets is None or num_oov_buckets < 0:
            raise ValueError(f"oov_buckets must be >= 0, got {num_oov_buckets}.")
        if table is not None:
            key_dtype = dtypes.as_dtype(key_dtype or table.key_dtype)
            if table.key_dtype.is_integer != key_dtype.is_integer:
                raise TypeError(f"Invalid key dtype, expected {table.key_dtype} but got "
                                f"{key_dtype}.")
            if table.value_dtype != dtypes.int64:
                raise TypeError(f"Invalid value dtype, expected {dtypes.int64} but got "
                                f"{table.value_dtype}.")
            name = name or table.name
        key_dtype = dtypes.as_dtype(key_dtype or dtypes.string)
        self._table = table
        self._num_oov_buckets = int(num_oov_buckets)
        self._hash = _hash_fn(hasher_spec)
        super().__init__(key_dtype, dtypes.int64, (name or "hash_bucket").split("/")[-1])
        if table is not None:
            self._resource_handle = table.resource_handle

    @property
    def initializer(self):
        return None if self._table is None else self._table.initializer

    @property
    def init(self):
        return self.initializer

    def size(self, name=None):
        """Vocabulary size plus the bucket count (an int64 scalar tensor)."""
        graph = graph_mod.get_default_graph()
        with graph.name_scope(name or f"{self.name}_Size"):
            buckets = convert_to_tensor(np.int64(self._num_oov_buckets))
            if self._table is None:
                return buckets
            return binary_ops.add(self._table.size(), buckets)

    def lookup(self, keys, name=None):
        """Ids of `keys` (a Tensor or SparseTensor of the key dtype)."""
        graph = graph_mod.get_default_graph()
        with graph.name_scope(name or f"{self.name}_Lookup"):
            values = _key_tensor(keys, self._key_dtype)
            text = values if values.dtype == dtypes.string else string_ops.as_string(values)
            ids = None
            if self._num_oov_buckets:
                ids = self._hash(text, num_buckets=self._num_oov_buckets, name="hash_bucket")
            if self._table is not None:
                table_keys = values
                if values.dtype.is_integer and values.dtype != self._table.key_dtype:
                    table_keys = cast(values, self._table.key_dtype)
                found = self._table.lookup(table_keys)
                if ids is None:
                    ids = found
                else:
                    buckets = binary_ops.add(ids, self._table.size())
                    known = comparison_ops.not_equal(found, self._table.default_value)
                    ids = select_ops.where_v2(known, found, buckets)
        return _rewrap(keys, ids)


def _check_buckets(num_oov_buckets) -> None:
    if num_oov_buckets is None or num_oov_buckets < 0:
        raise ValueError(f"num_oov_buckets must be greater or equal than 0, got "
                         f"{num_oov_buckets}.")


def _check_key_dtype(key_dtype) -> dtypes.DType:
    key_dtype = dtypes.as_dtype(key_dtype)
    if not key_dtype.is_integer and key_dtype != dtypes.string:
        raise TypeError("Only integer and string keys are supported.")
    return key_dtype


def _maybe_with_buckets(table, num_oov_buckets, hasher_spec, key_dtype):
    if num_oov_buckets:
        return IdTableWithHashBuckets(table, num_oov_buckets, hasher_spec=hasher_spec,
                                      key_dtype=key_dtype)
    return table


def index_table_from_file(vocabulary_file=None, num_oov_buckets=0, vocab_size=None,
                          default_value=-1, hasher_spec=FastHashSpec, key_dtype=dtypes.string,
                          name=None, key_column_index=TextFileIndex.WHOLE_LINE,
                          value_column_index=TextFileIndex.LINE_NUMBER, delimiter="\t"):
    """A table mapping each line (or column) of `vocabulary_file` to its line number.

    Keys not in the file map to `default_value`, or with `num_oov_buckets > 0` to a hashed
    bucket id after the vocabulary.

    Raises:
        ValueError: no file, negative buckets or a vocab_size below 1.
        TypeError: keys neither integer nor string.
    """
    if vocabulary_file is None or (isinstance(vocabulary_file, (str, bytes))
                                   and not vocabulary_file):
        raise ValueError("vocabulary_file must be specified and must not be empty.")
    _check_buckets(num_oov_buckets)
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"vocab_size must be greater than 0, got {vocab_size}. "
                         f"vocabulary_file: {vocabulary_file}")
    key_dtype = _check_key_dtype(key_dtype)
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "string_to_index"):
        init = TextFileIdTableInitializer(
            vocabulary_file, vocab_size=vocab_size,
            key_dtype=dtypes.int64 if key_dtype.is_integer else key_dtype, name="table_init",
            key_column_index=key_column_index, value_column_index=value_column_index,
            delimiter=delimiter)
        table = HashTable(init, default_value)
        return _maybe_with_buckets(table, num_oov_buckets, hasher_spec, key_dtype)


def index_table_from_tensor(mapping, num_oov_buckets=0, default_value=-1,
                            hasher_spec=FastHashSpec, dtype=dtypes.string, name=None):
    """A table mapping each element of the 1-D `mapping` to its position.

    Raises:
        ValueError: `mapping` missing, negative buckets, or a mapping dtype that does not fit
            `dtype` (integer vs string).
    """
    if mapping is None:
        raise ValueError("mapping must be specified.")
    _check_buckets(num_oov_buckets)
    dtype = _check_key_dtype(dtype)
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "string_to_index"):
        keys = convert_to_tensor(mapping)
        if keys.dtype.is_integer != dtype.is_integer:
            raise ValueError(f"Expected {'integer' if dtype.is_integer else 'non-integer'}, "
                             f"got {keys.dtype}.")
        if not dtype.is_integer and keys.dtype.base_dtype != dtype:
            raise ValueError(f"Expected {dtype}, got {keys.dtype}.")
        keys.shape.with_rank(1)
        if keys.dtype.is_integer and keys.dtype != dtypes.int64:
            keys = cast(keys, dtypes.int64)
        values = sequence_ops.range(shape_ops.size(keys, out_type=dtypes.int64),
                                    dtype=dtypes.int64)
        init = KeyValueTensorInitializer(keys, values, dtypes.int64 if dtype.is_integer
                                         else dtype, dtypes.int64, name="table_init")
        table = HashTable(init, default_value)
        return _maybe_with_buckets(table, num_oov_buckets, hasher_spec, dtype)


def index_to_string_table_from_file(vocabulary_file, vocab_size=None, default_value="UNK",
                                    name=None, key_column_index=TextFileIndex.LINE_NUMBER,
                                    value_column_index=TextFileIndex.WHOLE_LINE, delimiter="\t"):
    """A table mapping line numbers of `vocabulary_file` to its lines (`default_value` beyond).

    Raises:
        ValueError: no file, or a vocab_size below 1.
    """
    if vocabulary_file is None or (isinstance(vocabulary_file, (str, bytes))
                                   and not vocabulary_file):
        raise ValueError("vocabulary_file must be specified and must not be empty.")
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"vocab_size must be greater than 0, got {vocab_size}.")
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "index_to_string"):
        init = TextFileStringTableInitializer(
            vocabulary_file, vocab_size=vocab_size, name="table_init",
            key_column_index=key_column_index, value_column_index=value_column_index,
            delimiter=delimiter)
        return HashTable(init, default_value)


def index_to_string_table_from_tensor(mapping, default_value="UNK", name=None):
    """A table mapping positions of the 1-D string `mapping` to its elements.

    Raises:
        ValueError: `mapping` missing.
    """
    if mapping is None:
        raise ValueError("mapping must be specified.")
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "index_to_string"):
        strings = convert_to_tensor(mapping, dtype=dtypes.string)
        strings.shape.with_rank(1)
        keys = sequence_ops.range(shape_ops.size(strings, out_type=dtypes.int64),
                                  dtype=dtypes.int64)
        init = KeyValueTensorInitializer(keys, strings, dtypes.int64, dtypes.string,
                                         name="table_init")
        return HashTable(init, default_value)


def string_to_index(tensor, mapping, default_value=-1, name=None):
    """Ids of the strings in `tensor` by their position in `mapping` (deprecated TF1 helper)."""
    table = index_table_from_tensor(mapping, default_value=default_value, name=name)
    return table.lookup(tensor)


def index_to_string(tensor, mapping, default_value="UNK", name=None):
    """Strings of `mapping` at the int64 ids in `tensor` (deprecated TF1 helper)."""
    table = index_to_string_table_from_tensor(mapping, default_value=default_value, name=name)
    return table.lookup(tensor)
