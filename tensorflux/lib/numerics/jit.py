"""The numba gate: compiled kernels where NumPy needs many memory passes.

Every compiled kernel lives beside its NumPy reference, which stays the fallback: when numba is
not installed (a new Python without wheels yet) or the environment sets `TFX_JIT=0`,
`available()` is False and the op kernels call the reference. Callers decide once per kernel
instance (at executor build time), never per element.

Compiled functions use `cache=True` (machine code is kept next to this package, or in
`NUMBA_CACHE_DIR`, so later processes skip compilation). numba checks a cached function
against its own file only, not the kernels it calls from other modules, so a cache written by
other sources of this package could run their old code: before the first compilation of a
process, the cache files are dropped when the package's sources differ from those that wrote
them (a digest kept in the cache directory). `nogil=True` (the executor's inter-op
threads run them concurrently), `fastmath=False` and `error_model="numpy"` (NaN, inf and
division by zero behave as in NumPy instead of raising).

Small inputs keep the GIL: a kernel module defines a twin compiled with `jit(nogil=False)` that
calls the `nogil` kernel, and takes it when `holds_gil(size)` (fewer than `HOLD_GIL_ELEMENTS`
elements, tens of microseconds of work). Releasing the GIL costs nothing when no other Python
thread runs, but when others hold it (an input pipeline's queue-runner threads) the thread
that released it waits for them to give it back, ~5 ms (the switch interval) at each release:
in the CIFAR-10 tutorial a training step's ApplyGradientDescent kernels took 17.6 ms of wall
time per step for 1.3 ms of CPU, ReluGrad 19.5 ms for 6.4. Values are the same (one loop).

numba itself is imported at the first call of a compiled function, not with tensorflux (its
import costs ~0.5 s): `@jit` marks the function, and the first call of any marked function of
a module swaps all of that module's marked functions for numba dispatchers (so they can call
one another), then runs.

Example:
    >>> @jit
    ... def _double(x):
    ...     return x * 2
    >>> _double(np.ones(3)) if available() else None
"""

from __future__ import annotations

import functools
import glob
import hashlib
import importlib.util
import os
import sys
import threading

__all__ = ["available", "jit", "intra_op_threads", "holds_gil", "HOLD_GIL_ELEMENTS",
           "fresh_cache"]

_INSTALLED = importlib.util.find_spec("numba") is not None
_OPTIONS = {"cache": True, "nogil": True, "fastmath": False, "error_model": "numpy"}
_lock = threading.Lock()

# Kernels on fewer elements than this run their GIL-holding twin (`holds_gil`).
HOLD_GIL_ELEMENTS = 1 << 17


# Kernels ask per call: read os.environ's own dict (CPython keeps the encoded variables in
# `_data`, updated by every os.environ assignment) instead of its ~1 us `get`.
_ENV_DATA = getattr(os.environ, "_data", None)
if isinstance(_ENV_DATA, dict) and hasattr(os.environ, "encodekey"):
    _JIT_KEY, _OFF = os.environ.encodekey("TFX_JIT"), os.environ.encodevalue("0")
else:
    _ENV_DATA = None


def available() -> bool:
    """True when compiled kernels may run: numba is installed and `TFX_JIT` is not "0"."""
    if _ENV_DATA is not None:
        return _INSTALLED and _ENV_DATA.get(_JIT_KEY) != _OFF
    return _INSTALLED and os.environ.get("TFX_JIT", "1") != "0"


def holds_gil(size: int) -> bool:
    """True when a kernel on `size` elements should run its twin that keeps the GIL."""
    return size < HOLD_GIL_ELEMENTS


def intra_op_threads() -> int:
    """Threads one kernel may use: numba's count bounded by the cores this process may run on.

    NOTE: the process thread budget (runtime/, ConfigProto intra_op_parallelism_threads) is
    meant to replace this; until then numba's own setting caps it.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    if not _INSTALLED:
        return 1
    import numba

    return max(1, min(numba.get_num_threads(), cores))


class _Deferred:
    """A function to compile with numba once its module's first compiled call comes."""

    def __init__(self, fn, options: dict):
        self.fn = fn
        self.options = options
        functools.update_wrapper(self, fn)

    def __call__(self, *args):
        module = sys.modules[self.fn.__module__]
        _compile_module(module)
        return getattr(module, self.fn.__name__)(*args)


_CACHE_CHECKED = []
_DIGEST_FILE = "tfx_sources.digest"


def _sources_digest(package_dir: str) -> str:
    digest = hashlib.sha256()
    for path in sorted(glob.glob(os.path.join(package_dir, "*.py"))):
        digest.update(os.path.basename(path).encode())
        with open(path, "rb") as handle:
            digest.update(handle.read())
    return digest.hexdigest()


def _numba_cache_dir(package_dir: str) -> str | None:
    """The directory numba caches this package's kernels in (its own locator rules:
    NUMBA_CACHE_DIR, the package's __pycache__, or the user-wide cache)."""
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    probe = os.path.join(package_dir, "jit.py")
    for locator_class in getattr(impl, "_locator_classes", ()):
        try:
            locator = locator_class.from_function(_sources_digest, probe)
        except Exception:  # noqa: BLE001 - a locator numba cannot use here: try the next
            continue
        if locator is not None:
            return locator.get_cache_path()
    return None


def fresh_cache(package_dir: str | None = None, cache_dir: str | None = None) -> bool:
    """Drops numba's cached machine code of this package when the package's sources changed
    since it was written; returns True when files were dropped. A cache directory that cannot
    be written is left alone (numba then compiles in memory)."""
    package_dir = package_dir or os.path.dirname(os.path.abspath(__file__))
    cache_dir = cache_dir or _numba_cache_dir(package_dir)
    if cache_dir is None:
        return False
    digest = _sources_digest(package_dir)
    stamp = os.path.join(cache_dir, _DIGEST_FILE)
    try:
        with open(stamp, encoding="ascii") as handle:
            if handle.read().strip() == digest:
                return False
    except OSError:
        pass
    dropped = False
    try:
        for path in glob.glob(os.path.join(cache_dir, "*.nbi")) + \
                glob.glob(os.path.join(cache_dir, "*.nbc")):
            os.remove(path)
            dropped = True
        os.makedirs(cache_dir, exist_ok=True)
        with open(stamp, "w", encoding="ascii") as handle:
            handle.write(digest)
    except OSError:
        return dropped
    return dropped


def _compile_module(module) -> None:
    import numba  # the first compiled call of the process pays numba's import here

    with _lock:
        if not _CACHE_CHECKED:
            fresh_cache()
            _CACHE_CHECKED.append(True)
        for name, value in list(vars(module).items()):
            if isinstance(value, _Deferred):
                setattr(module, name, numba.njit(**value.options)(value.fn))


def jit(fn=None, *, parallel: bool = False, nogil: bool = True, reassociate: bool = False,
        contract: bool = False):
    """Marks `fn` for numba (`njit(cache=True, nogil=True, fastmath=False,
    error_model="numpy")`); `fn` itself when numba is not installed (callers check
    `available()` before calling it). Use it on module-level functions only.

    Args:
        fn: a function of arrays and scalars in numba's nopython subset.
        parallel: compile `prange` loops to run on numba's threads (only where measured to pay).
        nogil: False for a small-input twin that keeps the GIL (see `holds_gil`). A twin is
            its own function (a wrapper calling the kernel), never the kernel compiled again
            with other options, so cached machine code of the two never mixes.
        reassociate: let LLVM reorder float additions and multiplications (fastmath's
            `reassoc` flag alone: NaN, inf and signed zeros keep their IEEE behaviour), so a
            sum over a loop vectorises. Only for a small function whose result may differ from
            a sequential sum by rounding (its callers' tests compare with a tolerance).
        contract: let LLVM fuse a multiplication and an addition into one FMA (fastmath's
            `contract` flag: one rounding instead of two), for polynomial evaluations whose
            callers' tests compare with a tolerance.

    Returns:
        A stand-in that compiles (lazily, per argument types) on first call.
    """
    def wrap(func):
        if not _INSTALLED:
            return func
        options = dict(_OPTIONS, parallel=parallel, nogil=nogil)
        flags = {"reassoc"} if reassociate else set()
        if contract:
            flags.add("contract")
        if flags:
            options["fastmath"] = flags
        return _Deferred(func, options)

    return wrap if fn is None else wrap(fn)
