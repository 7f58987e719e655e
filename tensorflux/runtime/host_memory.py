"""Host memory: freed step buffers stay in the process instead of going back to the kernel.

Every step allocates its activations and gradients afresh (NumPy arrays of up to tens of MB).
glibc's malloc serves large blocks with mmap and trims the top of its heap, so each step's
freed buffers are handed back to the kernel and the next step page-faults the same memory in
again: on the training benchmarks that was a quarter of a CNN step spent zeroing pages. Fixing
the two thresholds keeps that memory in the heap from one step to the next, as the caching
allocators of TensorFlow and PyTorch do. Resident memory then stays at the peak of a step.

`keep_freed_memory()` runs once per process (sessions call it). It only tunes glibc; anywhere
else it does nothing, and so it does when the user set `MALLOC_MMAP_THRESHOLD_` or
`MALLOC_TRIM_THRESHOLD_` (their choice stands).
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# glibc's largest mmap threshold (blocks above it are always mapped afresh) and a trim
# threshold large enough that steps never give their memory back.
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 1 << 30
_USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")

_lock = threading.Lock()
_applied: bool | None = None


def keep_freed_memory() -> bool:
    """Tunes glibc malloc once per process; True when the thresholds are in place."""
    global _applied
    with _lock:
        if _applied is None:
            _applied = _tune()
        return _applied


def _tune() -> bool:
    if not sys.platform.startswith("linux") or any(k in os.environ for k in _USER_SETTINGS):
        return False
    try:
        libc = ctypes.CDLL(None)
        if not hasattr(libc, "gnu_get_libc_version"):
            return False  # NOTE: not glibc (musl): its mallopt ignores these parameters
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
