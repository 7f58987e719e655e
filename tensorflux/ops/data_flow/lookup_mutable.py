"""Mutable lookup tables (TF `tf.lookup.experimental.MutableHashTable` / `DenseHashTable`).

Both start empty and change through `insert` / `remove`; values may be tensors of a fixed
shape (that of `default_value`). With `checkpoint=True` (the default) the table's node name is
its resource name and the table is in SAVEABLE_OBJECTS, so `tf.train.Saver` saves its exported
keys and values and restores them with `LookupTableImportV2`.
"""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.saveable import SaveableObject, SaveSpec
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops.data_flow.lookup import (
    LookupInterface,
    LookupTableImportV2,
    LookupTableInsertV2,
    LookupTableRemoveV2,
    MutableDenseHashTableV2,
    MutableHashTableOfTensorsV2,
    MutableHashTableV2,
    _key_tensor,
)

__all__ = ["MutableHashTable", "DenseHashTable"]


class _MutableTableSaveable(SaveableObject):
    """A mutable table's exported keys and values (`<name>-keys`, `<name>-values`), restored
    with LookupTableImportV2."""

    def __init__(self, table, name):
        self._table = table
        keys, values = table.export()
        super().__init__(table.resource_handle, [SaveSpec(keys, "", f"{name}-keys"),
                                                 SaveSpec(values, "", f"{name}-values")], name)

    def restore(self, restored_tensors, restored_shapes):
        table = self._table
        return LookupTableImportV2(table.resource_handle, restored_tensors[0],
                                   restored_tensors[1], name=f"{table.name}_table_restore")


class MutableHashTable(LookupInterface):
    """A table changed by `insert` / `remove` (empty until then); values may be tensors.

    `default_value` fixes the value shape (a scalar or a tensor). With `checkpoint=True` the
    table is in SAVEABLE_OBJECTS, so `tf.train.Saver` saves and restores its entries.

    Example:
        >>> table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
        >>> insert = table.insert(tf.constant(["a"]), tf.constant([7], tf.int64))
    """

    def __init__(self, key_dtype, value_dtype, default_value, name="MutableHashTable",
                 checkpoint=True):
        self._setup(key_dtype, value_dtype, default_value, checkpoint)
        if self._value_shape.rank == 0:
            handle = MutableHashTableV2(key_dtype=self._key_dtype, value_dtype=self._value_dtype,
                                        use_node_name_sharing=checkpoint, name=name)
        else:
            handle = MutableHashTableOfTensorsV2(
                key_dtype=self._key_dtype, value_dtype=self._value_dtype,
                value_shape=self._value_shape, use_node_name_sharing=checkpoint, name=name)
        self._finish(handle, checkpoint)

    def _setup(self, key_dtype, value_dtype, default_value, checkpoint) -> None:
        key_dtype = dtypes.as_dtype(key_dtype)
        value_dtype = dtypes.as_dtype(value_dtype)
        self._default_value = convert_to_tensor(default_value, dtype=value_dtype)
        self._value_shape = self._default_value.shape
        if not self._value_shape.is_fully_defined():
            raise ValueError(f"default_value of a {type(self).__name__} needs a known shape, "
                             f"got {self._value_shape}")
        super().__init__(key_dtype, value_dtype, None)

    def _finish(self, handle, checkpoint) -> None:
        self._name = handle.op.name.split("/")[-1]
        self._resource_handle = handle
        if checkpoint:
            graph_mod.get_default_graph().add_to_collection(
                GraphKeys.SAVEABLE_OBJECTS, _MutableTableSaveable(self, handle.op.name))

    @property
    def default_value(self):
        return self._default_value

    def lookup(self, keys, name=None):
        """Values of `keys` ([..., *value_shape]); `default_value` where missing."""
        return self._find(keys, self._default_value, self._value_shape,
                          name or f"{self.name}_lookup_table_find")

    def insert(self, keys, values, name=None):
        """Adds or overwrites entries; values have shape keys.shape + value_shape."""
        graph = graph_mod.get_default_graph()
        with graph.name_scope(name or f"{self.name}_lookup_table_insert"):
            keys = _key_tensor(keys, self._key_dtype)
            values = convert_to_tensor(values, dtype=self._value_dtype, name="values")
            return LookupTableInsertV2(self.resource_handle, keys, values)

    def remove(self, keys, name=None):
        """Removes entries (missing keys are ignored)."""
        graph = graph_mod.get_default_graph()
        with graph.name_scope(name or f"{self.name}_lookup_table_remove"):
            keys = _key_tensor(keys, self._key_dtype)
            return LookupTableRemoveV2(self.resource_handle, keys)


class DenseHashTable(MutableHashTable):
    """A mutable table with two reserved keys that may never be used: `empty_key` and
    `deleted_key` (TensorFlow's open-addressing table needs them; using either in a lookup,
    insert or removal is an InvalidArgumentError here too).

    NOTE: `export` gives the live entries, not TensorFlow's array of buckets; lookups, sizes
    and checkpoints behave the same.

    Example:
        >>> table = tf.lookup.experimental.DenseHashTable(
        ...     tf.int64, tf.float32, default_value=0.0, empty_key=-1, deleted_key=-2)
    """

    def __init__(self, key_dtype, value_dtype, default_value, empty_key, deleted_key,
                 initial_num_buckets=None, name="MutableDenseHashTable", checkpoint=True):
        self._setup(key_dtype, value_dtype, default_value, checkpoint)
        empty = convert_to_tensor(empty_key, dtype=self._key_dtype, name="empty_key")
        deleted = convert_to_tensor(deleted_key, dtype=self._key_dtype, name="deleted_key")
        handle = MutableDenseHashTableV2(
            empty, deleted, key_dtype=self._key_dtype, value_dtype=self._value_dtype,
            value_shape=self._value_shape, use_node_name_sharing=checkpoint,
            initial_num_buckets=initial_num_buckets or 131072, name=name)
        self._finish(handle, checkpoint)
