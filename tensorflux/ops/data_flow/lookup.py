"""Lookup tables (TF1 `tf.lookup`, `tf.tables_initializer`): hash tables as device resources.

A table op (`HashTableV2`, `MutableHashTableV2`, `MutableHashTableOfTensorsV2`) outputs a
resource handle whose value is a `lookup_kernels.LookupTable` kept in the device's resource
manager under `(container, shared_name)` (or the node name with `use_node_name_sharing`, or a
private per-session name), so a table lives as long as its session. Static tables are filled by
an initializer op (`InitializeTableV2`, `InitializeTableFromTextFileV2`) that the initializer
object adds to the TABLE_INITIALIZERS collection; `tf.tables_initializer()` groups them.
Mutable tables (`MutableHashTable`, `DenseHashTable`) are in `lookup_mutable.py`; the table
resource and the vocabulary-file parser in `lookup_kernels.py`.

`StaticVocabularyTable` puts out-of-vocabulary keys into buckets with
`string_to_hash_bucket_fast` (FarmHash Fingerprint64, as TensorFlow): OOV bucket ids are
TensorFlow's too.
"""

from __future__ import annotations

import itertools
import uuid

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.op_def import define_op
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.data_flow import lookup_table as lookup_kernels
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.math.casting import cast
from tensorflux.ops.strings import conversion as string_ops
from tensorflux.ops.strings import hashing as string_codec_ops

__all__ = ["tables_initializer", "initialize_all_tables"]

_TABLE_IDS = itertools.count()
_TABLE_ATTRS = ["container: string = ''", "shared_name: string = ''",
                "use_node_name_sharing: bool = False", "key_dtype: type", "value_dtype: type"]


def _table_op(name, attrs=_TABLE_ATTRS):
    op = define_op(name, outputs=["table_handle: resource"], attrs=attrs, stateful=True,
                   differentiable=False)
    op.shape_fn(lambda **_: TensorShape([]))
    return op


HashTableV2 = _table_op("HashTableV2")
MutableHashTableV2 = _table_op("MutableHashTableV2")
MutableHashTableOfTensorsV2 = _table_op("MutableHashTableOfTensorsV2",
                                        _TABLE_ATTRS + ["value_shape: shape = []"])


def _table_kernel(mutable, container, shared_name, use_node_name_sharing, key_dtype,
                  value_dtype, node_name, value_shape=()):
    if shared_name:
        name = shared_name
    elif use_node_name_sharing:
        name = node_name
    else:
        name = f"_{next(_TABLE_IDS)}_{node_name}"

    def make():
        return lookup_kernels.LookupTable(name, key_dtype, value_dtype, value_shape, mutable)

    def kernel(ctx):
        table = ctx.resource_mgr.lookup_or_create(container, name, make)
        table.check_compatible(key_dtype, value_dtype, value_shape)
        return table

    return kernel


def _table_factory(mutable: bool):
    def factory(container, shared_name, use_node_name_sharing, key_dtype, value_dtype,
                node_name):
        return _table_kernel(mutable, container, shared_name, use_node_name_sharing, key_dtype,
                             value_dtype, node_name)

    return factory


@MutableHashTableOfTensorsV2.kernel(ctx=True, factory=True)
def _table_of_tensors_factory(container, shared_name, use_node_name_sharing, key_dtype,
                              value_dtype, value_shape, node_name):
    shape = tuple(as_shape(value_shape).as_list())
    return _table_kernel(True, container, shared_name, use_node_name_sharing, key_dtype,
                         value_dtype, node_name, shape)


HashTableV2.kernel(ctx=True, factory=True)(_table_factory(False))
MutableHashTableV2.kernel(ctx=True, factory=True)(_table_factory(True))


MutableDenseHashTableV2 = define_op(
    "MutableDenseHashTableV2", inputs=["empty_key: key_dtype", "deleted_key: key_dtype"],
    outputs=["table_handle: resource"],
    attrs=_TABLE_ATTRS + ["value_shape: shape = []", "initial_num_buckets: int = 131072",
                          "max_load_factor: float = 0.8"],
    stateful=True, differentiable=False)
MutableDenseHashTableV2.shape_fn(lambda empty_key, deleted_key: TensorShape([]))


@MutableDenseHashTableV2.kernel(ctx=True, factory=True)
def _dense_table_factory(container, shared_name, use_node_name_sharing, key_dtype, value_dtype,
                         value_shape, node_name):
    # The bucket count and load factor tune TensorFlow's open addressing; sorted arrays
    # need neither.
    shape = tuple(as_shape(value_shape).as_list())
    name = shared_name or (node_name if use_node_name_sharing
                           else f"_{next(_TABLE_IDS)}_{node_name}")

    def kernel(ctx, empty_key, deleted_key):
        def make():
            return lookup_kernels.DenseLookupTable(name, key_dtype, value_dtype, shape,
                                                   empty_key, deleted_key)

        table = ctx.resource_mgr.lookup_or_create(container, name, make)
        table.check_compatible(key_dtype, value_dtype, shape)
        return table

    return kernel


def _handle_op(name, inputs=(), outputs=(), attrs=()):
    return define_op(name, inputs=["table_handle: resource", *inputs], outputs=list(outputs),
                     attrs=list(attrs), stateful=True, differentiable=False)


InitializeTableV2 = _handle_op("InitializeTableV2", ["keys: Tkey", "values: Tval"],
                               attrs=["Tkey: type", "Tval: type"])
LookupTableImportV2 = _handle_op("LookupTableImportV2", ["keys: Tin", "values: Tout"],
                                 attrs=["Tin: type", "Tout: type"])
InitializeTableFromTextFileV2 = _handle_op(
    "InitializeTableFromTextFileV2", ["filename: string"],
    attrs=["key_index: int >= -2", "value_index: int >= -2", "vocab_size: int >= -1 = -1",
           "delimiter: string = '\t'", "offset: int = 0"])
LookupTableFindV2 = _handle_op("LookupTableFindV2", ["keys: Tin", "default_value: Tout"],
                               ["values: Tout"], ["Tin: type", "Tout: type"])
LookupTableInsertV2 = _handle_op("LookupTableInsertV2", ["keys: Tin", "values: Tout"],
                                 attrs=["Tin: type", "Tout: type"])
LookupTableRemoveV2 = _handle_op("LookupTableRemoveV2", ["keys: Tin"], attrs=["Tin: type"])
LookupTableSizeV2 = _handle_op("LookupTableSizeV2", outputs=["size: int64"])
LookupTableExportV2 = _handle_op("LookupTableExportV2", outputs=["keys: Tkeys",
                                                                 "values: Tvalues"],
                                 attrs=["Tkeys: type", "Tvalues: type"])


def _no_outputs(*_):
    return []


def _rank1_pairs(handle, keys, values):
    if keys.rank is not None and keys.rank != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {keys.rank} for keys")
    if values.rank is not None and values.rank != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {values.rank} for values")
    if not keys.is_compatible_with(values):
        raise ValueError(f"Dimensions must be equal, but are {keys.as_list()[0]} and "
                         f"{values.as_list()[0]} for keys and values")
    return []


@LookupTableFindV2.shape_fn
def _find_shape(handle, keys, default_value):
    if default_value.rank == 0:
        return keys
    return TensorShape(None)


InitializeTableV2.shape_fn(_rank1_pairs)
LookupTableImportV2.shape_fn(_no_outputs)
InitializeTableFromTextFileV2.shape_fn(_no_outputs)
LookupTableInsertV2.shape_fn(_no_outputs)
LookupTableRemoveV2.shape_fn(_no_outputs)
LookupTableSizeV2.shape_fn(lambda handle: TensorShape([]))
LookupTableExportV2.shape_fn(lambda handle: [TensorShape(None), TensorShape(None)])


@InitializeTableV2.kernel(ctx=True)
def _initialize_table_kernel(ctx, table_handle, keys, values):
    table_handle.initialize(keys, values)


@LookupTableImportV2.kernel(ctx=True)
def _import_kernel(ctx, table_handle, keys, values):
    table_handle.import_values(keys, values)


@InitializeTableFromTextFileV2.kernel(ctx=True)
def _initialize_from_text_file_kernel(ctx, table_handle, filename, *, key_index, value_index,
                                      vocab_size, delimiter, offset):
    if table_handle.initialized:
        return
    path = filename.item() if isinstance(filename, np.ndarray) else filename
    path = path.decode() if isinstance(path, bytes) else str(path)
    keys, values = lookup_kernels.read_table_file(
        path, key_index, value_index, vocab_size, delimiter, offset, table_handle.key_dtype,
        table_handle.value_dtype)
    table_handle.initialize(keys, values)


@LookupTableFindV2.kernel(ctx=True)
def _find_kernel(ctx, table_handle, keys, default_value):
    return table_handle.find(keys, default_value)


@LookupTableInsertV2.kernel(ctx=True)
def _insert_kernel(ctx, table_handle, keys, values):
    table_handle.insert(keys, values)


@LookupTableRemoveV2.kernel(ctx=True)
def _remove_kernel(ctx, table_handle, keys):
    table_handle.remove(keys)


@LookupTableSizeV2.kernel(ctx=True)
def _size_kernel(ctx, table_handle):
    return table_handle.size()


@LookupTableExportV2.kernel(ctx=True)
def _export_kernel(ctx, table_handle):
    return table_handle.export()


# -- initializers ------------------------------------------------------------------------------

class TableInitializerBase:
    """Builds the op that fills a table; the op is added to TABLE_INITIALIZERS."""

    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)

    @property
    def key_dtype(self):
        return self._key_dtype

    @property
    def value_dtype(self):
        return self._value_dtype

    @property
    def _shared_name(self) -> str:
        return f"hash_table_{uuid.uuid4()}"

    def initialize(self, table):
        raise TypeError(f"{type(self).__name__} must define initialize(table)")


def _check_table_dtypes(table, key_dtype, value_dtype) -> None:
    if key_dtype.base_dtype != table.key_dtype:
        raise TypeError(f"Invalid key dtype for table, expected {table.key_dtype} but got "
                        f"{key_dtype}.")
    if value_dtype.base_dtype != table.value_dtype:
        raise TypeError(f"Invalid value dtype for table, expected {table.value_dtype} but got "
                        f"{value_dtype}.")


class KeyValueTensorInitializer(TableInitializerBase):
    """Fills a table from two rank-1 tensors of keys and values.

    Example:
        >>> init = tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2], value_dtype=tf.int64)
        >>> table = tf.lookup.StaticHashTable(init, default_value=-1)
    """

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        graph = graph_mod.get_default_graph()
        with graph.name_scope(name or "key_value_init") as scope:
            self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
            self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
            self._name = scope
        super().__init__(self._keys.dtype, self._values.dtype)

    def initialize(self, table):
        """Returns the InitializeTableV2 op for `table` (also added to TABLE_INITIALIZERS)."""
        _check_table_dtypes(table, self._keys.dtype, self._values.dtype)
        graph = graph_mod.get_default_graph()
        with graph.name_scope(self._name):
            init_op = InitializeTableV2(table.resource_handle, self._keys, self._values)
        graph.add_to_collection(GraphKeys.TABLE_INITIALIZERS, init_op)
        return init_op


class TextFileIndex:
    """Special column indices of TextFileInitializer: the whole line or its number."""

    WHOLE_LINE = lookup_kernels.WHOLE_LINE
    LINE_NUMBER = lookup_kernels.LINE_NUMBER


class TextFileInitializer(TableInitializerBase):
    """Fills a table from a text file, one entry per line.

    `key_index` / `value_index` pick a `delimiter`-separated column, or
    `TextFileIndex.WHOLE_LINE` (-2) / `TextFileIndex.LINE_NUMBER` (-1, int64, counted from 0).
    `vocab_size` reads only the first lines (and fails when the file has fewer). Empty lines
    are an error. The filename constant is added to ASSET_FILEPATHS so SavedModels copy it.

    Raises:
        ValueError: no filename, an index below -2, or a LINE_NUMBER column whose dtype is not
            int64, or WHOLE_LINE values that are not string or int64.
    """

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index,
                 vocab_size=None, delimiter="\t", name=None, value_index_offset=0):
        if not isinstance(filename, Tensor) and not filename:
            raise ValueError("`filename` argument required for tf.lookup.TextFileInitializer")
        key_dtype = dtypes.as_dtype(key_dtype)
        value_dtype = dtypes.as_dtype(value_dtype)
        for what, index in (("key_index", key_index), ("value_index", value_index)):
            if index < -2:
                raise ValueError(f"`{what}` should be >= -2, received: {index}.")
        if key_index == TextFileIndex.LINE_NUMBER and key_dtype != dtypes.int64:
            raise ValueError(f"`key_dtype` must be int64 if `key_index` is -1, received: "
                             f"{key_dtype}")
        if key_index == TextFileIndex.WHOLE_LINE and not (key_dtype.is_integer or
                                                         key_dtype == dtypes.string):
            raise ValueError(f"`key_dtype` should be either integer or string for "
                             f"`key_index` -2, received: {key_dtype}")
        if value_index == TextFileIndex.LINE_NUMBER and value_dtype != dtypes.int64:
            raise ValueError(f"`value_dtype` must be int64 for `value_index` -1, received: "
                             f"{value_dtype}")
        if value_index == TextFileIndex.WHOLE_LINE and value_dtype != dtypes.string:
            raise ValueError(f"`value_dtype` must be string for `value_index` -2, received: "
                             f"{value_dtype}")
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"`vocab_size` must be > 0, received: {vocab_size}")
        self._filename = filename
        self._key_index = key_index
        self._value_index = value_index
        self._vocab_size = vocab_size
        self._delimiter = delimiter
        self._name = name
        self._offset = value_index_offset
        super().__init__(key_dtype, value_dtype)

    @property
    def _shared_name(self) -> str:
        if isinstance(self._filename, Tensor):
            return super()._shared_name
        filename = self._filename.decode() if isinstance(self._filename, bytes) \
            else str(self._filename)
        name = f"hash_table_{filename}_{self._key_index}_{self._value_index}"
        if self._vocab_size is not None:
            name += f"_{self._vocab_size}"
        return name + (f"_{self._offset}" if self._offset else "")

    def initialize(self, table):
        """Returns the InitializeTableFromTextFileV2 op for `table` (in TABLE_INITIALIZERS)."""
        _check_table_dtypes(table, self.key_dtype, self.value_dtype)
        graph = graph_mod.get_default_graph()
        with graph.name_scope(self._name or "text_file_init"):
            filename = convert_to_tensor(self._filename, dtype=dtypes.string,
                                         name="asset_filepath")
            init_op = InitializeTableFromTextFileV2(
                table.resource_handle, filename, key_index=self._key_index,
                value_index=self._value_index,
                vocab_size=-1 if self._vocab_size is None else self._vocab_size,
                delimiter=self._delimiter, offset=self._offset)
        graph.add_to_collection(GraphKeys.TABLE_INITIALIZERS, init_op)
        if constant_value(filename) is not None and filename.op.type == "Const":
            graph.add_to_collection(GraphKeys.ASSET_FILEPATHS, filename)
        return init_op


# -- tables ------------------------------------------------------------------------------------

def _key_tensor(keys, key_dtype):
    if isinstance(keys, SparseTensor):
        values = keys.values
    else:
        values = keys if isinstance(keys, Tensor) else convert_to_tensor(keys, dtype=key_dtype,
                                                                         name="keys")
    if values.dtype.base_dtype != key_dtype:
        raise TypeError(f"Dtype of argument `keys` must be {key_dtype}, received: "
                        f"{values.dtype}")
    return values


def _rewrap(keys, values):
    if isinstance(keys, SparseTensor):
        return SparseTensor(keys.indices, values, keys.dense_shape)
    return values


class LookupInterface:
    """What every table offers: dtypes, name, handle, size and lookup."""

    def __init__(self, key_dtype, value_dtype, name):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)
        self._name = name

    @property
    def key_dtype(self):
        return self._key_dtype

    @property
    def value_dtype(self):
        return self._value_dtype

    @property
    def name(self) -> str:
        return self._name

    @property
    def resource_handle(self):
        return self._resource_handle

    def size(self, name=None):
        """The number of entries (an int64 scalar tensor)."""
        graph = graph_mod.get_default_graph()
        with graph.name_scope(name or f"{self.name}_Size"):
            return LookupTableSizeV2(self.resource_handle)

    def _find(self, keys, default_value, value_shape, name):
        graph = graph_mod.get_default_graph()
        with graph.name_scope(name or f"{self.name}_Lookup"):
            flat = _key_tensor(keys, self._key_dtype)
            values = LookupTableFindV2(self.resource_handle, flat, default_value)
            if value_shape is not None:
                values.set_shape(flat.shape.concatenate(value_shape))
        return _rewrap(keys, values)

    def export(self, name=None):
        """(keys, values) tensors with every entry of the table."""
        graph = graph_mod.get_default_graph()
        with graph.name_scope(name or f"{self.name}_lookup_table_export_values"):
            keys, values = LookupTableExportV2(self.resource_handle, Tkeys=self._key_dtype,
                                               Tvalues=self._value_dtype)
        return keys, values


class StaticHashTable(LookupInterface):
    """An immutable key -> value table filled once by its initializer.

    Contract: looking a key up before `tf.tables_initializer()` (or `table.initializer`) ran
    fails with FailedPreconditionError "Table not initialized."; a missing key gives
    `default_value`. `lookup` accepts dense or sparse keys of any shape.

    Example:
        >>> table = tf.lookup.StaticHashTable(
        ...     tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2]), default_value=-1)
        >>> ids = table.lookup(tf.constant(["b", "zz"]))      # [2, -1] once initialized
    """

    def __init__(self, initializer, default_value, name=None):
        if not isinstance(initializer, TableInitializerBase):
            raise TypeError(f"initializer must be a table initializer, got {initializer!r}")
        graph = graph_mod.get_default_graph()
        self._default_value = convert_to_tensor(default_value, dtype=initializer.value_dtype)
        with graph.name_scope(name or "hash_table") as scope:
            handle = HashTableV2(shared_name=initializer._shared_name,
                                 key_dtype=initializer.key_dtype,
                                 value_dtype=initializer.value_dtype, name=scope)
        super().__init__(initializer.key_dtype, initializer.value_dtype,
                         scope.rstrip("/").split("/")[-1])
        self._default_value.shape.with_rank(0)
        self._resource_handle = handle
        self._initializer = initializer
        self._init_op = initializer.initialize(self)

    @property
    def initializer(self):
        return self._init_op

    @property
    def init(self):
        return self._init_op

    @property
    def default_value(self):
        return self._default_value

    def lookup(self, keys, name=None):
        """Values of `keys` (a Tensor or SparseTensor of key_dtype); default where missing.

        Raises:
            TypeError: `keys` is not of the table's key dtype.
        """
        return self._find(keys, self._default_value, TensorShape([]), name)



class StaticVocabularyTable(LookupInterface):
    """Maps vocabulary keys to their ids and other keys to one of `num_oov_buckets` buckets.

    Ids of unknown keys are `vocab_size + hash(key) % num_oov_buckets` (see the module NOTE on
    the hash). Integer keys are hashed through their decimal strings.

    Raises:
        ValueError: `num_oov_buckets` is not positive.
        TypeError: the initializer's values are not int64, or the key dtype is not string,
            int32 or int64.
    """

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None):
        if num_oov_buckets <= 0:
            raise ValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        if initializer.value_dtype != dtypes.int64:
            raise TypeError(f"Invalid `value_dtype`, expected {dtypes.int64} but got "
                            f"{initializer.value_dtype}.")
        key_dtype = initializer.key_dtype
        if key_dtype not in (dtypes.string, dtypes.int32, dtypes.int64):
            raise TypeError(f"Invalid `key_dtype`, expected one of {dtypes.string}, "
                            f"{dtypes.int32}, {dtypes.int64} but got {key_dtype}.")
        self._table = StaticHashTable(initializer, -1, name=name)
        self._num_oov_buckets = int(num_oov_buckets)
        lookup_key_dtype = dtypes.as_dtype(lookup_key_dtype or key_dtype)
        if key_dtype.is_integer != lookup_key_dtype.is_integer:
            raise TypeError(f"Invalid `key_dtype`, expected {key_dtype} but got "
                            f"{lookup_key_dtype}.")
        super().__init__(lookup_key_dtype, dtypes.int64, self._table.name)
        self._resource_handle = self._table.resource_handle

    @property
    def initializer(self):
        return self._table.initializer

    def size(self, name=None):
        """Vocabulary size plus `num_oov_buckets` (an int64 scalar tensor)."""

        graph = graph_mod.get_default_graph()
        with graph.name_scope(name or f"{self.name}_Size"):
            return math_ops.add(self._table.size(), np.int64(self._num_oov_buckets))

    def lookup(self, keys, name=None):
        """Ids of `keys` (dense or sparse): vocabulary ids, or OOV bucket ids past them."""

        graph = graph_mod.get_default_graph()
        with graph.name_scope(name or f"{self.name}_Lookup"):
            flat = _key_tensor(keys, self._key_dtype)
            table_keys = flat
            if self._key_dtype == dtypes.int32:
                table_keys = cast(flat, dtypes.int64)
            text = flat if flat.dtype == dtypes.string else string_ops.as_string(flat)
            buckets = string_codec_ops.string_to_hash_bucket_fast(
                text, self._num_oov_buckets, name="hash_bucket")
            ids = self._table.lookup(table_keys)
            oov = math_ops.add(buckets, self._table.size())
            result = select_ops.where_v2(math_ops.not_equal(ids, np.int64(-1)), ids, oov)
        return _rewrap(keys, result)


def tables_initializer(name="init_all_tables"):
    """An op running every initializer in the TABLE_INITIALIZERS collection (a NoOp if none)."""

    initializers = graph_mod.get_collection(GraphKeys.TABLE_INITIALIZERS)
    if initializers:
        return control_flow_ops.group(*initializers, name=name)
    return control_flow_ops.no_op(name=name)


def initialize_all_tables(name="init_all_tables"):
    """Deprecated alias of `tables_initializer`."""
    return tables_initializer(name)
