"""Crash-safe files: temporary names, atomic replacement, a per-directory writer lock.

Every file a checkpoint save writes (bundle data and index, `.meta`, the `checkpoint` state
file) first goes to a temporary name `<final name>.tfxtmp-<pid>-<random>` in the same
directory, is fsynced, and is renamed over its final name (an atomic replacement on POSIX);
the directory is fsynced after the rename. A process killed mid-save therefore leaves only
files whose name says whose they were; `remove_stale_temporaries` deletes those whose
process is gone (the next save does it).

`directory_lock(directory)` serializes the writers of one directory: the threads of this
process (a reentrant lock) and other processes (`flock` on the directory, where available).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import threading

try:
    import fcntl
except ImportError:  # not POSIX: the process-local lock alone
    fcntl = None

MARK = ".tfxtmp-"
_TEMP = re.compile(re.escape(MARK) + r"(\d+)-[0-9a-f]+$")

_LOCKS_GUARD = threading.Lock()
_LOCKS: dict = {}  # realpath -> [RLock, fd or None, depth]


def temp_path(path: str) -> str:
    """A fresh temporary name for `path`, in its directory, naming this process."""
    return f"{os.fspath(path)}{MARK}{os.getpid()}-{secrets.token_hex(6)}"


def temp_owner(name: str):
    """The pid in a temporary file name, or None when `name` is not one."""
    found = _TEMP.search(name)
    return int(found.group(1)) if found else None


def final_name(name: str) -> str:
    """`model.ckpt.meta.tfxtmp-12-ab` -> `model.ckpt.meta`."""
    found = _TEMP.search(name)
    return name[:found.start()] if found else name


def process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    except OSError:
        return False
    return True


def fsync_directory(directory: str) -> None:
    """Makes renames in `directory` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_file(path: str, data) -> None:
    """Writes `data` (bytes or str) at `path` atomically: readers see the old file or the new
    one, never a part; a crash leaves at most a temporary file.

    Raises:
        OSError: the directory is missing or not writable (the temporary file is removed).
    """
    path = os.fspath(path)
    temp = temp_path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        with open(temp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        remove_quietly(temp)
        raise
    fsync_directory(os.path.dirname(path))


def remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


@contextlib.contextmanager
def directory_lock(directory: str):
    """Holds the writer lock of `directory` (reentrant in one thread)."""
    key = os.path.realpath(directory or ".")
    with _LOCKS_GUARD:
        entry = _LOCKS.get(key)
        if entry is None:
            entry = _LOCKS[key] = [threading.RLock(), None, 0]
    lock = entry[0]
    lock.acquire()
    try:
        if entry[2] == 0 and fcntl is not None:
            try:
                fd = os.open(key, os.O_RDONLY)
            except OSError:
                fd = None
            if fd is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                except OSError:  # a file system without flock: threads are still serialized
                    os.close(fd)
                    fd = None
            entry[1] = fd
        entry[2] += 1
        try:
            yield
        finally:
            entry[2] -= 1
            if entry[2] == 0 and entry[1] is not None:
                fd, entry[1] = entry[1], None
                try:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                finally:
                    os.close(fd)
    finally:
        lock.release()


def stale_temporaries(directory: str, always_stale=lambda name: False) -> list:
    """Temporary files of `directory` left by processes that are gone (or for which
    `always_stale(name)` says no live writer can own them)."""
    try:
        names = os.listdir(directory or ".")
    except OSError:
        return []
    stale = []
    for name in names:
        pid = temp_owner(name)
        if pid is not None and (always_stale(name) or not process_alive(pid)):
            stale.append(name)
    return stale
