"""`tf.data.experimental.SqlDataset`: the rows of an SQL query on an SQLite database.

Each row becomes a tuple with one scalar per column, converted to the given `output_types`
(strings, integers, floats, bool). The driver, database and query may be tensors (fed when
the iterator is initialized). Errors are typed as TF's: an unknown driver is
InvalidArgumentError, a query that fails is InvalidArgumentError naming it, a column count
other than `len(output_types)` InvalidArgumentError.
"""

from __future__ import annotations

import sqlite3

import numpy as np

from tensorflux.data import structure
from tensorflux.data.dataset_ops import Dataset
from tensorflux.framework import dtypes, errors
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_shape import TensorShape

__all__ = ["SqlDataset"]

_ALLOWED = (dtypes.string, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64,
            dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64, dtypes.float32,
            dtypes.float64, dtypes.bool_)


def _string_arg(value, name):
    value = value if isinstance(value, Tensor) else structure.as_array(value, dtypes.string)
    dtype, shape = structure.leaf_spec(value)
    if dtype is not dtypes.string or (shape.ndims is not None and shape.ndims != 0):
        raise TypeError(f"SqlDataset: `{name}` must be a string scalar, got {dtype.name} "
                        f"with shape {shape}")
    return value


def _text(value):
    item = np.asarray(value).item()
    return item.decode() if isinstance(item, bytes) else str(item)


class SqlDataset(Dataset):
    """The rows `query` returns from the SQLite database `data_source_name`.

    Raises:
        TypeError: a non-string driver/source/query or an unsupported output type.
    """

    def __init__(self, driver_name, data_source_name, query, output_types):
        self._driver = _string_arg(driver_name, "driver_name")
        self._source = _string_arg(data_source_name, "data_source_name")
        self._query = _string_arg(query, "query")
        template = output_types
        types = [dtypes.as_dtype(t) for t in structure.flatten(output_types)]
        for dtype in types:
            if dtype not in _ALLOWED:
                raise TypeError(f"SqlDataset: output type {dtype.name} is not supported "
                                f"(strings, integers, floats and bool are)")
        super().__init__([], [self._driver, self._source, self._query], types,
                         [TensorShape([])] * len(types), template)

    def _iterate(self, ctx):
        driver = _text(ctx.value(self._driver))
        if driver != "sqlite":
            raise errors.InvalidArgumentError(None, None, f"The database type, {driver}, is not "
                                              "supported by SqlDataset. The set of supported "
                                              "databases is: {'sqlite'}.")
        source, query = _text(ctx.value(self._source)), _text(ctx.value(self._query))
        try:
            connection = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        except sqlite3.Error as err:
            raise errors.InvalidArgumentError(None, None, f"Sqlite error: {err} (database "
                                              f"{source})") from None
        try:
            try:
                cursor = connection.execute(query)
            except sqlite3.Error as err:
                raise errors.InvalidArgumentError(None, None, f"Sqlite error: {err} (query "
                                                  f"{query!r} on {source})") from None
            width = len(cursor.description or ())
            if width != len(self._types):
                raise errors.InvalidArgumentError(
                    None, None, f"The number of columns in query ({width}) must match the "
                    f"number of elements in output_types ({len(self._types)}).")
            for row in cursor:
                yield tuple(self._convert(value, dtype) for value, dtype in zip(row, self._types))
        finally:
            connection.close()

    @staticmethod
    def _convert(value, dtype):
        if dtype is dtypes.string:
            if isinstance(value, bytes):
                return np.array(value, dtype=object)
            return np.array(str(value if value is not None else "").encode(), dtype=object)
        if value is None:
            value = 0
        if dtype is dtypes.bool_:
            return np.array(bool(int(value)))
        return np.array(value, dtype=dtype.as_numpy_dtype)
