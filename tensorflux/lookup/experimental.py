"""`tf.lookup.experimental`: mutable tables."""

from tensorflux.ops.lookup_mutable import DenseHashTable, MutableHashTable

__all__ = ["DenseHashTable", "MutableHashTable"]
