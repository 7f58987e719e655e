"""`Dataset.cache()`: in memory (per iterator initialization) or in a file shared by sessions.

File cache contract: the first complete pass over the input writes every element to
`<filename>.tfxcache` (through a temporary name renamed at the end, so a partial pass never
leaves a cache behind; a lock file beside it makes a second concurrent writer fail with
AlreadyExistsError, as in TF); any later pass, in any session or process, reads the elements
from that file instead of the input. The format is ours: per component a dtype code, the shape
and the raw bytes (strings as length-prefixed bytes); reading it never executes code.
"""

from __future__ import annotations

import itertools
import os
import struct

import numpy as np

from tensorflux.data.dataset_ops import Dataset, ElementError
from tensorflux.framework import dtypes, errors
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value
from tensorflux.platform import gfile

_MAGIC = b"TFXCACHE1\n"
_STRING = "string"
_TEMP_IDS = itertools.count()


def _write_element(handle, element) -> None:
    handle.write(struct.pack("<I", len(element)))
    for array in element:
        code = _STRING if array.dtype == object else array.dtype.str
        handle.write(struct.pack("<B", len(code)) + code.encode())
        handle.write(struct.pack("<B", array.ndim) + struct.pack(f"<{array.ndim}q", *array.shape))
        if code == _STRING:
            for item in array.reshape(-1):
                item = bytes(item)
                handle.write(struct.pack("<Q", len(item)) + item)
        else:
            data = np.ascontiguousarray(array).tobytes()
            handle.write(struct.pack("<Q", len(data)) + data)


def _read_exact(handle, n: int, path: str) -> bytes:
    data = handle.read(n)
    if len(data) != n:
        raise errors.DataLossError(None, None, f"Truncated dataset cache file {path}")
    return data


def _read_elements(path: str):
    with open(path, "rb") as handle:
        if handle.read(len(_MAGIC)) != _MAGIC:
            raise errors.DataLossError(None, None, f"{path} is not a tensorflux dataset cache")
        while True:
            head = handle.read(4)
            if not head:
                return
            if len(head) != 4:
                raise errors.DataLossError(None, None, f"Truncated dataset cache file {path}")
            (count,) = struct.unpack("<I", head)
            element = []
            for _ in range(count):
                (size,) = struct.unpack("<B", _read_exact(handle, 1, path))
                code = _read_exact(handle, size, path).decode()
                (ndim,) = struct.unpack("<B", _read_exact(handle, 1, path))
                shape = struct.unpack(f"<{ndim}q", _read_exact(handle, 8 * ndim, path))
                if code == _STRING:
                    items = []
                    for _ in range(int(np.prod(shape, dtype=np.int64))):
                        (length,) = struct.unpack("<Q", _read_exact(handle, 8, path))
                        items.append(_read_exact(handle, length, path))
                    array = np.empty(len(items), dtype=object)
                    array[:] = items
                    element.append(array.reshape(shape))
                else:
                    (length,) = struct.unpack("<Q", _read_exact(handle, 8, path))
                    data = _read_exact(handle, length, path)
                    element.append(np.frombuffer(data, dtype=np.dtype(code)).reshape(shape))
            yield tuple(element)


class CacheDataset(Dataset):
    """Replays the first complete pass of its input (see the module docstring)."""

    def __init__(self, dataset, filename: str):
        self._filename = None  # a string tensor, read when the iterator is initialized
        if isinstance(filename, Tensor):
            if filename.dtype.base_dtype != dtypes.string or filename.shape.ndims not in (None,
                                                                                          0):
                raise TypeError(f"Dataset.cache(): filename must be a scalar string, got "
                                f"{filename!r}")
            value = constant_value(filename)
            if value is None:
                self._filename = filename
                filename = ""
            else:
                filename = np.asarray(value).item()
        if isinstance(filename, bytes):
            filename = filename.decode()
        if not isinstance(filename, str):
            raise TypeError(f"Dataset.cache(): filename must be a string, got {filename!r}")
        self._path = filename + ".tfxcache" if filename else ""
        captures = [] if self._filename is None else [self._filename]
        super().__init__([dataset], captures, dataset._types, dataset._shapes,
                         dataset._template)

    def _iterate(self, ctx):
        if self._filename is not None:
            name = np.asarray(ctx.value(self._filename)).item()
            name = name.decode() if isinstance(name, bytes) else str(name)
            if name:
                yield from self._iterate_file(ctx, name + ".tfxcache")
                return
        elif self._path:
            yield from self._iterate_file(ctx, self._path)
            return
        key = ("cache", id(self))
        cached = ctx.state.get(key)
        if cached is not None:
            yield from cached
            return
        recorded = []
        for element in self._inputs[0]._iterate(ctx):
            if type(element) is not ElementError:
                recorded.append(element)
            yield element
        ctx.state[key] = recorded

    def _iterate_file(self, ctx, path: str):
        if os.path.exists(path):
            yield from _read_elements(path)
            return
        lock = path + ".lockfile"
        try:  # one writer per cache file: another iterator writing it holds the lock file
            os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            raise errors.AlreadyExistsError(
                None, None, f"Dataset.cache(): another iterator is writing the cache "
                f"{path!r} (lock file {lock!r} exists); if none is, delete the lock file and "
                f"initialize the iterator again.") from None
        except OSError as err:  # TF's class for the errno (NotFoundError, ...), naming the file
            with gfile.status_errors(path):
                raise OSError(err.errno, "Dataset.cache() cannot write its cache file: "
                              f"{err.strerror or err}", path) from None
        temp = f"{path}.tmp-{os.getpid()}-{next(_TEMP_IDS)}"
        complete = False
        try:
            with open(temp, "wb") as handle:
                handle.write(_MAGIC)
                for element in self._inputs[0]._iterate(ctx):
                    if type(element) is not ElementError:
                        _write_element(handle, element)
                    yield element
            complete = True
            os.replace(temp, path)
        except OSError as err:  # TF's class for the errno (NotFoundError, ...), naming the file
            with gfile.status_errors(path):
                raise OSError(err.errno, "Dataset.cache() cannot write its cache file: "
                              f"{err.strerror or err}", path) from None
        finally:
            if not complete and os.path.exists(temp):
                os.remove(temp)
            if os.path.exists(lock):
                os.remove(lock)


__all__: list = []
