"""The lookup table resource and the text-file parser behind `InitializeTableFromTextFileV2`.

Contract: a table keeps its keys sorted (with the values in the same order), so a lookup is one
`np.searchsorted` over the whole key tensor; inserts and removals rebuild the sorted arrays in
one vectorised merge. An *initializable* (static) table must be initialized before use
(lookups fail with FailedPreconditionError "Table not initialized."), accepts duplicate keys
only when they map to equal values, and ignores later initializations (as TensorFlow does when
an initializer runs again). A *mutable* table starts empty and is changed by insert / remove /
import. All methods are thread-safe.
"""

from __future__ import annotations

import threading

import numpy as np

from tensorflux.framework import errors


def _key_text(key) -> str:
    return key.decode("utf-8", "replace") if isinstance(key, bytes) else str(key)


def _row_equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-row equality of two arrays of shape [n, *value_shape]."""
    equal = a == b
    return equal.reshape(len(a), -1).all(axis=1) if equal.ndim > 1 else equal


class LookupTable:
    """A hash table resource (HashTableV2 / MutableHashTableV2 / MutableHashTableOfTensorsV2).

    Args:
        name: the resource name.
        key_dtype, value_dtype: the table's DTypes.
        value_shape: the shape of one value (() for scalar tables).
        mutable: False for a table that must be initialized once before use.
    """

    def __init__(self, name: str, key_dtype, value_dtype, value_shape=(), mutable=False):
        self.name = name
        self.key_dtype = key_dtype
        self.value_dtype = value_dtype
        self.value_shape = tuple(value_shape)
        self.mutable = mutable
        self.initialized = mutable
        self._lock = threading.Lock()
        self._keys = np.zeros([0], key_dtype.as_numpy_dtype)
        self._values = np.zeros([0, *self.value_shape], value_dtype.as_numpy_dtype)

    def describe(self) -> str:
        return f"table '{self.name}'"

    def check_compatible(self, key_dtype, value_dtype, value_shape=()) -> None:
        if (key_dtype, value_dtype, tuple(value_shape)) != (self.key_dtype, self.value_dtype,
                                                            self.value_shape):
            raise errors.InvalidArgumentError(
                None, None, f"Shared {self.describe()} holds {self.key_dtype.name} -> "
                f"{self.value_dtype.name} {list(self.value_shape)} but the op asks for "
                f"{key_dtype.name} -> {value_dtype.name} {list(value_shape)}")

    # -- checks ------------------------------------------------------------------------------

    def _check_keys(self, keys: np.ndarray) -> np.ndarray:
        expected = self.key_dtype.as_numpy_dtype
        if keys.dtype != expected:
            raise errors.InvalidArgumentError(
                None, None, f"Key must be type {self.key_dtype.name} but got {keys.dtype} for "
                f"{self.describe()}")
        return keys

    def _check_pairs(self, keys: np.ndarray, values: np.ndarray):
        self._check_keys(keys)
        if values.dtype != self.value_dtype.as_numpy_dtype:
            raise errors.InvalidArgumentError(
                None, None, f"Value must be type {self.value_dtype.name} but got "
                f"{values.dtype} for {self.describe()}")
        expected = (*keys.shape, *self.value_shape)
        if values.shape != expected:
            if not self.value_shape and keys.size != values.size:
                raise errors.InvalidArgumentError(
                    None, None, f"Keys and values must have the same size {keys.size} vs "
                    f"{values.size}")
            if self.value_shape or values.shape != keys.shape:
                raise errors.InvalidArgumentError(
                    None, None, f"Expected shape {list(expected)} for value, got "
                    f"{list(values.shape)}")
        return keys.reshape(-1), values.reshape(keys.size, *self.value_shape)

    def _check_initialized(self) -> None:
        if not self.initialized:
            raise errors.FailedPreconditionError(None, None, "Table not initialized.")

    # -- reads -------------------------------------------------------------------------------

    def size(self) -> np.int64:
        with self._lock:
            self._check_initialized()
            return np.int64(len(self._keys))

    def find(self, keys: np.ndarray, default: np.ndarray) -> np.ndarray:
        """Values of `keys` (any shape); `default` where a key is missing."""
        keys = self._check_keys(np.asarray(keys))
        default = np.asarray(default)
        if default.shape not in ((), self.value_shape, (*keys.shape, *self.value_shape)):
            allowed = "[]" if not self.value_shape else str(list(self.value_shape))
            raise errors.InvalidArgumentError(
                None, None, f"Expected shape {allowed} or {list(keys.shape)} for default "
                f"value, got {list(default.shape)}")
        with self._lock:
            self._check_initialized()
            table_keys, table_values = self._keys, self._values
        flat = keys.reshape(-1)
        out_shape = (*keys.shape, *self.value_shape)
        if not len(table_keys):
            return np.broadcast_to(default, out_shape).astype(table_values.dtype, copy=True)
        at = np.minimum(np.searchsorted(table_keys, flat), len(table_keys) - 1)
        found = table_keys[at] == flat
        result = table_values[at].reshape(out_shape)
        mask = found.reshape(keys.shape + (1,) * len(self.value_shape))
        return np.where(mask, result, default).astype(table_values.dtype, copy=False)

    def export(self):
        with self._lock:
            self._check_initialized()
            return self._keys.copy(), self._values.copy()

    # -- writes ------------------------------------------------------------------------------

    def initialize(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Fills a static table once; duplicate keys must agree on their value."""
        keys, values = self._check_pairs(np.asarray(keys), np.asarray(values))
        with self._lock:
            if self.initialized and not self.mutable:
                return
            order = np.argsort(keys, kind="stable")
            keys, values = keys[order], values[order]
            if len(keys) > 1:
                same = keys[1:] == keys[:-1]
                if same.any():
                    differs = same & ~_row_equal(values[1:], values[:-1])
                    if differs.any():
                        i = int(np.flatnonzero(differs)[0])
                        raise errors.FailedPreconditionError(
                            None, None, f"HashTable has different value for same key. Key "
                            f"{_key_text(keys[i])} has {values[i]} and trying to add value "
                            f"{values[i + 1]}")
                    keep = np.concatenate([[True], ~same])
                    keys, values = keys[keep], values[keep]
            self._keys, self._values = keys, values
            self.initialized = True

    def insert(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Adds or overwrites entries (the last of repeated keys wins)."""
        keys, values = self._check_pairs(np.asarray(keys), np.asarray(values))
        with self._lock:
            self._keys, self._values = self._merged(keys, values)

    def _merged(self, keys, values):
        all_keys = np.concatenate([self._keys, keys])
        all_values = np.concatenate([self._values, values])
        order = np.argsort(all_keys, kind="stable")
        all_keys, all_values = all_keys[order], all_values[order]
        last = np.append(all_keys[1:] != all_keys[:-1], True)
        return all_keys[last], all_values[last]

    def remove(self, keys: np.ndarray) -> None:
        keys = self._check_keys(np.asarray(keys)).reshape(-1)
        with self._lock:
            if not len(self._keys) or not len(keys):
                return
            at = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
            hit = at[self._keys[at] == keys]
            keep = np.ones(len(self._keys), bool)
            keep[hit] = False
            self._keys, self._values = self._keys[keep], self._values[keep]

    def import_values(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Replaces a mutable table's contents; initializes a static one."""
        if not self.mutable:
            self.initialize(keys, values)
            return
        keys, values = self._check_pairs(np.asarray(keys), np.asarray(values))
        with self._lock:
            self._keys = np.zeros([0], self.key_dtype.as_numpy_dtype)
            self._values = np.zeros([0, *self.value_shape], self.value_dtype.as_numpy_dtype)
            self._keys, self._values = self._merged(keys, values)


# -- text files ------------------------------------------------------------------------------

WHOLE_LINE = -2
LINE_NUMBER = -1


def _read_lines(filename: str) -> tuple[list, list]:
    """The file's lines (without "\\n" / "\\r\\n") and the byte offset after each."""
    try:
        with open(filename, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{filename}; No such file or directory") from None
    except IsADirectoryError:
        raise errors.FailedPreconditionError(None, None, f"{filename}; Is a directory") from None
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    ends = np.cumsum([len(line) + 1 for line in lines]).tolist()
    lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
    return lines, ends


def _column_values(fields: list, dtype, filename: str):
    """Converts one column of byte strings to `dtype` (InvalidArgumentError on a bad field)."""
    np_dtype = dtype.as_numpy_dtype
    if np_dtype is object:
        return np.array(fields, dtype=object)
    try:
        return np.array(fields, dtype=bytes).astype(np_dtype)
    except (ValueError, OverflowError):
        for i, field in enumerate(fields):
            try:
                np.array([field], dtype=bytes).astype(np_dtype)
            except (ValueError, OverflowError):
                raise errors.InvalidArgumentError(
                    None, None, f"Field {_key_text(field)} in line {i} is not a valid "
                    f"{dtype.name}.") from None
        raise


def read_table_file(filename: str, key_index: int, value_index: int, vocab_size: int,
                    delimiter: str, offset: int, key_dtype, value_dtype):
    """Keys and values of a vocabulary file as `InitializeTableFromTextFileV2` reads them."""
    lines, ends = _read_lines(filename)
    if vocab_size != -1:
        if len(lines) < vocab_size:
            raise errors.InvalidArgumentError(
                None, None, f"Invalid vocab_size in {filename}: expected {vocab_size} but got "
                f"{len(lines)}")
        lines = lines[:vocab_size]
    empty = [i for i, line in enumerate(lines) if not line]
    if empty:
        raise errors.InvalidArgumentError(
            None, None, f"Invalid content in {filename}: empty line found at position "
            f"{ends[empty[0]]}.")
    wanted = max(key_index, value_index)
    rows = None
    if wanted >= 0:
        sep = delimiter.encode() if isinstance(delimiter, str) else delimiter
        rows = [line.split(sep) for line in lines]
        short = [i for i, row in enumerate(rows) if len(row) <= wanted]
        if short:
            i = short[0]
            raise errors.InvalidArgumentError(
                None, None, f"Invalid number of columns in {filename} line {i} "
                f"({_key_text(lines[i])}) : expected at least {wanted + 1} got {len(rows[i])}")

    def column(index, dtype):
        if index == LINE_NUMBER:
            return (np.arange(len(lines), dtype=np.int64) + offset).astype(dtype.as_numpy_dtype)
        fields = lines if index == WHOLE_LINE else [row[index] for row in rows]
        return _column_values(fields, dtype, filename)

    return column(key_index, key_dtype), column(value_index, value_dtype)


class DenseLookupTable(LookupTable):
    """A mutable table with reserved `empty_key` / `deleted_key` (MutableDenseHashTableV2).

    Using either reserved key in a lookup, insert or removal is an InvalidArgumentError, as in
    TensorFlow. NOTE: `export` returns the live entries only, not TensorFlow's bucket array.
    """

    def __init__(self, name, key_dtype, value_dtype, value_shape, empty_key, deleted_key):
        super().__init__(name, key_dtype, value_dtype, value_shape, mutable=True)
        self.empty_key = np.asarray(empty_key)
        self.deleted_key = np.asarray(deleted_key)
        if np.array_equal(self.empty_key, self.deleted_key):
            raise errors.InvalidArgumentError(
                None, None, f"Empty and deleted keys of {self.describe()} must differ, both "
                f"are {_key_text(self.empty_key.item())}")

    def _check_keys(self, keys: np.ndarray) -> np.ndarray:
        keys = super()._check_keys(keys)
        for what, reserved in (("empty_key", self.empty_key), ("deleted_key", self.deleted_key)):
            if np.any(keys == reserved.item()):
                raise errors.InvalidArgumentError(
                    None, None, f"Using the {what} as a table key is not allowed")
        return keys
