"""`tf.data.experimental.cardinality`: the number of elements of a dataset, when known.

Computed from the dataset's description when the graph is built: sources of known size,
`repeat`, `take`, `skip`, `batch`, `zip`, `concatenate`, `enumerate` and the element-wise
transformations (map, shuffle, cache, prefetch, options) propagate it; filters, files,
generators and counts held in non-constant tensors give UNKNOWN_CARDINALITY (-2); an endless
`repeat` gives INFINITE_CARDINALITY (-1). The result is an int64 scalar tensor, as in TF.
"""

from __future__ import annotations

from tensorflux.data import batching, cache, dataset_ops, ordering, structure, transformations
from tensorflux.data.dataset_ops import Dataset, static_int
from tensorflux.framework import dtypes
from tensorflux.ops.array.constants import constant

__all__ = ["cardinality", "static_cardinality", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]

INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2
_INF, _UNKNOWN = INFINITE_CARDINALITY, UNKNOWN_CARDINALITY


def _known(value):
    value = static_int(value)
    return _UNKNOWN if value is None else value


def _range_size(dataset) -> int:
    args = [_known(a) for a in dataset._args]
    if _UNKNOWN in args:
        return _UNKNOWN
    start, stop, step = args
    return len(range(start, stop, step)) if step else _UNKNOWN


def _count(dataset) -> int:
    """The static cardinality of `dataset` (a Python int)."""
    kind = type(dataset)
    if kind is dataset_ops.TensorDataset:
        return 1
    if kind is dataset_ops.TensorSliceDataset:
        _, shape = structure.leaf_spec(dataset._leaves[0])
        dim = None if shape.ndims is None else shape.as_list()[0]
        return _UNKNOWN if dim is None else int(dim)
    if kind is dataset_ops.RangeDataset:
        return _range_size(dataset)
    inputs = [_count(d) for d in dataset._inputs]
    if kind is ordering.ZipDataset:
        if _UNKNOWN in inputs:
            return _UNKNOWN
        finite = [n for n in inputs if n != _INF]
        return min(finite) if finite else _INF
    if kind is ordering.ConcatenateDataset:
        if _INF in inputs:
            return _INF
        return _UNKNOWN if _UNKNOWN in inputs else sum(inputs)
    if kind in (transformations.MapDataset, ordering.ShuffleDataset, cache.CacheDataset) or \
            getattr(dataset, "_keeps_cardinality", False):
        return inputs[0]
    n = inputs[0]
    if kind is ordering.RepeatDataset:
        count = _known(dataset._count)
        if count == _UNKNOWN:
            return _UNKNOWN
        if n == 0 or count == 0:
            return 0
        if count < 0 or n == _INF:
            return _INF
        return _UNKNOWN if n == _UNKNOWN else n * count
    if kind is ordering.TakeDataset:
        count = _known(dataset._count)
        if count == _UNKNOWN:
            return _UNKNOWN
        if count < 0:
            return n
        return count if n in (_INF,) else (_UNKNOWN if n == _UNKNOWN else min(n, count))
    if kind is ordering.SkipDataset:
        count = _known(dataset._count)
        if count == _UNKNOWN or n in (_UNKNOWN, _INF):
            return _UNKNOWN if count == _UNKNOWN else n
        return max(n - max(count, 0), 0) if count >= 0 else 0
    if kind in (batching.BatchDataset, batching.PaddedBatchDataset):
        size = _known(dataset._size)
        if size == _UNKNOWN or n == _UNKNOWN or size <= 0:
            return _UNKNOWN
        if n == _INF:
            return _INF
        return n // size if dataset._drop else -(-n // size)
    return _UNKNOWN


def static_cardinality(dataset) -> int:
    """The cardinality of `dataset` as a Python int, told from its structure without running
    it: a count, INFINITE_CARDINALITY or UNKNOWN_CARDINALITY."""
    return _count(dataset)


def cardinality(dataset):
    """The number of elements of `dataset` as an int64 scalar tensor:
    `INFINITE_CARDINALITY` (-1) for an endless one, `UNKNOWN_CARDINALITY` (-2) when it cannot
    be told without running the pipeline.

    Raises:
        TypeError: `dataset` is not a Dataset.
    """
    if not isinstance(dataset, Dataset):
        raise TypeError(f"cardinality() expects a tf.data.Dataset, got {dataset!r}")
    return constant(_count(dataset), dtypes.int64, name="Cardinality")
