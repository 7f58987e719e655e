"""The numba gate: compiled kernels where NumPy needs many memory passes.

Every compiled kernel lives beside its NumPy reference, which stays the fallback: when numba is
not importable (a new Python without wheels yet) or the environment sets `TFX_JIT=0`,
`available()` is False and the op kernels call the reference. Callers decide once per kernel
instance (at executor build time), never per element.

Compiled functions use `cache=True` (machine code is kept next to this package, or in
`NUMBA_CACHE_DIR`, so later processes skip compilation), `nogil=True` (the executor's inter-op
threads run them concurrently), `fastmath=False` and `error_model="numpy"` (NaN, inf and
division by zero behave as in NumPy instead of raising).

Example:
    >>> @jit
    ... def _double(x):
    ...     return x * 2
    >>> _double(np.ones(3)) if available() else None
"""

from __future__ import annotations

import os

try:
    import numba as _numba
except ImportError:  # NOTE: no wheels for this Python yet: the NumPy references run.
    _numba = None

__all__ = ["available", "jit", "intra_op_threads"]


def available() -> bool:
    """True when compiled kernels may run: numba imports and `TFX_JIT` is not "0"."""
    return _numba is not None and os.environ.get("TFX_JIT", "1") != "0"


def intra_op_threads() -> int:
    """Threads one kernel may use: numba's count bounded by the cores this process may run on.

    NOTE: the process thread budget (runtime/, ConfigProto intra_op_parallelism_threads) is
    meant to replace this; until then numba's own setting caps it.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    if _numba is None:
        return 1
    return max(1, min(_numba.get_num_threads(), cores))


def jit(fn=None, *, parallel: bool = False):
    """Compiles `fn` with numba (`njit(cache=True, nogil=True, fastmath=False,
    error_model="numpy")`); returns `fn`
    unchanged when numba is missing (callers check `available()` before calling it).

    Args:
        fn: a function of arrays and scalars in numba's nopython subset.
        parallel: compile `prange` loops to run on numba's threads (only where measured to pay).

    Returns:
        The compiled dispatcher (compiled lazily, per argument types, on first call).
    """
    def wrap(func):
        if _numba is None:
            return func
        return _numba.njit(cache=True, nogil=True, fastmath=False, error_model="numpy",
                           parallel=parallel)(func)

    return wrap if fn is None else wrap(fn)
