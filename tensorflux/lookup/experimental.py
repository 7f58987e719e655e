"""`tf.lookup.experimental`: mutable tables."""

from tensorflux.ops.data_flow.lookup_mutable import DenseHashTable, MutableHashTable

__all__ = ["DenseHashTable", "MutableHashTable"]
