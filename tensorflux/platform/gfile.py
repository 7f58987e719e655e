"""`tf.gfile` (and `tf.io.gfile`'s snake_case names) for local paths.

Failures raise TensorFlow's status errors, as TF's file system layer does: a missing path is a
`NotFoundError`, an existing destination an `AlreadyExistsError`, a directory where a file is
needed (or the reverse) a `FailedPreconditionError`. Paths may be `str`, `bytes` or path-like,
optionally with a `file://` prefix; another scheme (`gs://`, `hdfs://`) is `UnimplementedError`.

Example:
    >>> with GFile("/tmp/x.txt", "w") as f:
    ...     f.write("hello\\n")
    >>> GFile("/tmp/x.txt").read()
    'hello\\n'
"""

from __future__ import annotations

import contextlib
import errno
import glob as _glob
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass

from tensorflux.framework import errors

__all__ = [
    "Copy",
    "DeleteRecursively",
    "Exists",
    "FastGFile",
    "GFile",
    "Glob",
    "IsDirectory",
    "ListDirectory",
    "MakeDirs",
    "MkDir",
    "Mkdir",
    "Open",
    "Remove",
    "Rename",
    "Stat",
    "Walk",
    "FileStatistics",
    "copy",
    "exists",
    "glob",
    "isdir",
    "listdir",
    "makedirs",
    "mkdir",
    "remove",
    "rename",
    "rmtree",
    "stat",
    "walk",
]

_ERRNO_TO_ERROR = {
    errno.ENOENT: errors.NotFoundError,
    errno.EEXIST: errors.AlreadyExistsError,
    errno.EACCES: errors.PermissionDeniedError,
    errno.EPERM: errors.PermissionDeniedError,
    errno.EROFS: errors.PermissionDeniedError,
    errno.EISDIR: errors.FailedPreconditionError,
    errno.ENOTDIR: errors.FailedPreconditionError,
    errno.ENOTEMPTY: errors.FailedPreconditionError,
    errno.EXDEV: errors.FailedPreconditionError,
    errno.ENOSPC: errors.ResourceExhaustedError,
    errno.EMFILE: errors.ResourceExhaustedError,
    errno.ENAMETOOLONG: errors.InvalidArgumentError,
    errno.EINVAL: errors.InvalidArgumentError,
    errno.EBUSY: errors.UnavailableError,
}


@contextlib.contextmanager
def status_errors(path: str):
    """Re-raises an OSError as the TensorFlow status error for its errno, naming the path
    (for the package's own file writers; not part of TF's tf.gfile)."""
    try:
        yield
    except OSError as e:
        cls = _ERRNO_TO_ERROR.get(e.errno, errors.UnknownError)
        where = e.filename if e.filename is not None else path
        raise cls(None, None, f"{where}; {e.strerror or e}") from e


_status_errors = status_errors


def _path(name) -> str:
    path = os.fspath(name)
    if isinstance(path, bytes):
        path = path.decode("utf-8")
    scheme, sep, rest = path.partition("://")
    if sep and scheme.isidentifier():
        if scheme != "file":
            raise errors.UnimplementedError(
                None, None, f"File system scheme '{scheme}' not implemented (file: '{path}')"
            )
        path = rest
    return path


_MODES = ("r", "w", "a", "r+", "w+", "a+")


class GFile:
    """A file with TensorFlow's semantics: opened lazily on first use, text or binary by mode.

    Modes are `r`, `w`, `a`, `r+`, `w+`, `a+`, each optionally with `b`. Without `b`, reads
    return `str` (UTF-8, no newline translation); with it, `bytes`. `write` takes either. Offsets
    (`seek`, `tell`, `read(n)`) count bytes in both modes, as TF's do. A missing file raises
    `NotFoundError` at the first read, not at construction, and a file opened for writing is
    created by the first write.
    """

    def __init__(self, name, mode: str = "r"):
        self._name = _path(name)
        self._mode = mode
        self._binary = "b" in mode
        base = mode.replace("b", "")
        if base not in _MODES:
            raise errors.InvalidArgumentError(
                None, None, f"mode is not 'r' or 'w' or 'a' or 'r+' or 'w+' or 'a+': {mode!r}"
            )
        self._base_mode = base
        self._readable = base in ("r", "r+", "w+", "a+")
        self._writable = base in ("w", "a", "r+", "w+", "a+")
        self._file = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def mode(self) -> str:
        return self._mode

    def _handle(self):
        if self._file is None:
            with _status_errors(self._name):
                self._file = open(self._name, self._base_mode + "b")  # noqa: SIM115
        return self._file

    def _reader(self):
        if not self._readable:
            raise errors.PermissionDeniedError(None, None, "File isn't open for reading")
        return self._handle()

    def _writer(self):
        if not self._writable:
            raise errors.PermissionDeniedError(None, None, "File isn't open for writing")
        return self._handle()

    def _out(self, data: bytes):
        return data if self._binary else data.decode("utf-8")

    def read(self, n: int = -1):
        """Reads `n` bytes (all if negative); returns str in text mode, bytes in binary."""
        handle = self._reader()
        with _status_errors(self._name):
            return self._out(handle.read(-1 if n is None else n))

    def readline(self):
        handle = self._reader()
        with _status_errors(self._name):
            return self._out(handle.readline())

    def readlines(self) -> list:
        lines = []
        while line := self.readline():
            lines.append(line)
        return lines

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def write(self, file_content) -> None:
        """Writes str (as UTF-8) or bytes, in either mode."""
        data = file_content.encode("utf-8") if isinstance(file_content, str) else file_content
        handle = self._writer()
        with _status_errors(self._name):
            handle.write(bytes(data))

    def seek(self, offset: int | None = None, whence: int = 0, position: int | None = None):
        """Moves to byte `offset` relative to `whence` (0 start, 1 current, 2 end)."""
        if position is not None:
            offset = position
        if offset is None:
            raise TypeError("seek() needs an offset")
        handle = self._handle()
        if whence == 0:
            target = 0
        elif whence == 1:
            target = handle.tell()
        elif whence == 2:
            handle.flush()
            target = os.fstat(handle.fileno()).st_size
        else:
            raise errors.InvalidArgumentError(None, None, f"Invalid whence argument: {whence}")
        if target + offset < 0:
            raise errors.InvalidArgumentError(
                None, None, f"Seeking to a negative position: {target + offset}"
            )
        with _status_errors(self._name):
            handle.seek(target + offset)

    def tell(self) -> int:
        return self._handle().tell()

    def size(self) -> int:
        """Returns the file's length in bytes (including writes not yet flushed)."""
        if self._file is not None and self._writable:
            self._file.flush()
        return stat(self._name).length

    def seekable(self) -> bool:
        return True

    def flush(self) -> None:
        if self._file is not None:
            with _status_errors(self._name):
                self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            with _status_errors(self._name):
                self._file.close()
            self._file = None

    def __del__(self):
        # NOTE: TF programs often write `GFile(path).read()` and never close; close quietly.
        with contextlib.suppress(Exception):
            self.close()

    def __enter__(self) -> GFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"GFile({self._name!r}, mode={self._mode!r})"


Open = GFile
FastGFile = GFile


@dataclass(frozen=True)
class FileStatistics:
    """What `Stat` returns: size in bytes, modification time in ns, and whether a directory."""

    length: int
    mtime_nsec: int
    is_directory: bool


def exists(path) -> bool:
    """True if `path` names an existing file or directory."""
    return os.path.exists(_path(path))


def isdir(path) -> bool:
    return os.path.isdir(_path(path))


def stat(path) -> FileStatistics:
    """Returns the FileStatistics of `path`; raises NotFoundError if it does not exist."""
    path = _path(path)
    with _status_errors(path):
        result = os.stat(path)
    return FileStatistics(result.st_size, result.st_mtime_ns, os.path.isdir(path))


def listdir(path) -> list[str]:
    """Returns the sorted entry names of directory `path` (no '.' or '..').

    Raises:
      NotFoundError: `path` is not a directory.
    """
    path = _path(path)
    if not os.path.isdir(path):
        raise errors.NotFoundError(None, None, f"Could not find directory {path}")
    with _status_errors(path):
        return sorted(os.listdir(path))


def mkdir(path) -> None:
    """Creates one directory; its parent must exist and it must not."""
    path = _path(path)
    with _status_errors(path):
        os.mkdir(path)


def makedirs(path) -> None:
    """Creates a directory and its missing parents; an existing directory is fine."""
    path = _path(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise errors.FailedPreconditionError(None, None, f"{path} is not a directory")
    with _status_errors(path):
        os.makedirs(path, exist_ok=True)


def remove(path) -> None:
    """Deletes a file; a directory is a FailedPreconditionError."""
    path = _path(path)
    with _status_errors(path):
        os.remove(path)


def rmtree(path) -> None:
    """Deletes a directory and everything below it (or a single file)."""
    path = _path(path)
    if not os.path.lexists(path):
        raise errors.NotFoundError(None, None, f"{path} not found")
    with _status_errors(path):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)


def rename(src, dst, overwrite: bool = False) -> None:
    """Renames `src` to `dst`.

    Raises:
      AlreadyExistsError: `dst` exists and `overwrite` is False.
      NotFoundError: `src` does not exist.
    """
    src, dst = _path(src), _path(dst)
    if not overwrite and os.path.exists(dst):
        raise errors.AlreadyExistsError(None, None, f"file already exists: {dst}")
    with _status_errors(src):
        os.replace(src, dst)


def copy(src, dst, overwrite: bool = False) -> None:
    """Copies the contents of file `src` to `dst`.

    Raises:
      AlreadyExistsError: `dst` exists and `overwrite` is False.
      NotFoundError: `src` does not exist.
    """
    src, dst = _path(src), _path(dst)
    if not overwrite and os.path.exists(dst):
        raise errors.AlreadyExistsError(None, None, f"file already exists: {dst}")
    with _status_errors(src):
        shutil.copyfile(src, dst)


def glob(pattern) -> list[str]:
    """Returns the sorted paths matching a pattern (or any of a list of patterns)."""
    patterns = [pattern] if isinstance(pattern, (str, bytes, os.PathLike)) else list(pattern)
    matches = set()
    for item in patterns:
        matches.update(_glob.glob(_path(item)))
    return sorted(matches)


def walk(top, topdown: bool = True, onerror=None) -> Iterator[tuple[str, list[str], list[str]]]:
    """Yields `(dirname, subdirs, files)` for `top` and every directory below it.

    With `topdown`, a directory comes before its subdirectories, and removing names from
    `subdirs` prunes the walk. A missing `top` yields nothing (or calls `onerror`).
    """
    top = _path(top)
    try:
        names = listdir(top)
    except errors.NotFoundError as e:
        if onerror is not None:
            onerror(e)
        return
    subdirs, files = [], []
    for name in names:
        if os.path.isdir(os.path.join(top, name)):
            subdirs.append(name)
        else:
            files.append(name)
    here = (top, subdirs, files)
    if topdown:
        yield here
    for subdir in subdirs:
        yield from walk(os.path.join(top, subdir), topdown, onerror)
    if not topdown:
        yield here


def Walk(top, in_order: bool = True):  # noqa: N802 - TF1 name
    """TF1 spelling of `walk`: `in_order` means top-down."""
    return walk(top, topdown=in_order)


def Rename(oldname, newname, overwrite: bool = False) -> None:  # noqa: N802 - TF1 name
    rename(oldname, newname, overwrite)


def Copy(oldpath, newpath, overwrite: bool = False) -> None:  # noqa: N802 - TF1 name
    copy(oldpath, newpath, overwrite)


Exists = exists
IsDirectory = isdir
Stat = stat
ListDirectory = listdir
Mkdir = mkdir
MakeDirs = makedirs
MkDir = mkdir
Remove = remove
DeleteRecursively = rmtree
Glob = glob
