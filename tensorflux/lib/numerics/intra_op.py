"""Intra-op split: large kernels cut into parts run on concurrent threads.

When the process's BLAS runs one thread (the thread budget gives it one when other processes
keep our cores busy: OpenBLAS's spin-waiting threads collapse under contention), a large
kernel still gets one runnable thread, while TF's intra-op pool runs one per core and so
gets a larger share of the CPUs from the scheduler. Kernels here are cut into parts run at
once: one in the calling thread, the others on the helpers of a `submit(fn) -> bool`
callable, each part with the process's single BLAS thread and no spin synchronisation.

- `matmul` cuts a product into row chunks of `a` (or column chunks of `b`).
- `run_parts(fn, parts)` runs any `fn(i)` over parts: the convolutions (`conv2d`,
  `conv_fft`: im2col pieces, transforms per batch range, products per frequency bin) and the
  compiled pooling kernels (`pooling_jit`: batch ranges) use it. Their parts are the very
  products and loops of the unsplit kernel (only the thread running them differs), so split
  values equal unsplit ones bit for bit; `matmul`'s row chunks equal them only as far as BLAS
  gives each row the same sums whatever the row count (it does at these sizes in practice).
  The bulk of a part must release the GIL (BLAS, NumPy copies, numba `nogil` kernels).

- `run_elementwise(fn, parts)` is `run_parts` for parts that call no BLAS (compiled loops,
  NumPy elementwise passes) on a quiet machine: when BLAS has several threads (cores are
  free, `splits() == 1`), such a kernel runs on as many, as TF's Eigen kernels do on its
  intra-op pool. Under load (BLAS with one thread) it stays inline: a 2-3 ms kernel split
  over a helper that waits for a time slice took 2-3x longer (median) at load 8 on 2 cores.

- Background kernels (the fast path's inter-op overlap, `runtime/overlap.py`): a kernel run
  on a pool worker beside the step's driver registers its job here (`set_background`); its
  large products and `run_parts` kernels are then cut into chunks that the job offers to the
  driver (`job.offer(work)` as `submit`), so a driver that needs the value before it is done
  runs the chunks still unclaimed instead of waiting.

- Kernels of our own (`own_kernel()`: the convolutions on either path, im2col or frequency
  domain, and their gradients) make many BLAS calls too small for BLAS's threads (per image
  and per frequency bin) between copies and transforms that run on one thread. On a quiet
  machine (BLAS with several threads, no split) such a kernel asks the runtime for the split
  instead while it runs: BLAS gets one thread and the kernel's parts run on as many helpers
  as BLAS had threads (stop 23: the CNN's frequency-domain convolutions 2-3x less wall time
  on a quiet 2-core machine). Values are the same (the parts are the unsplit products).

The runtime decides the split (`configure(splits, submit, elementwise)`, from the thread
budget, and `configure_own_kernels(enter, leave)`); this
module imports nothing of it. With `splits == 1` (the default, a quiet machine, BLAS with
several threads) `matmul` is `np.matmul` and `run_parts` a loop after one comparison. Parts
are claimed from a shared counter, so a helper that never starts (a busy pool) costs nothing:
the caller runs every part nobody claimed, and only waits for parts a helper is running.
"""

from __future__ import annotations

import threading

import numpy as np

# A chunk smaller than this many flops is not worth a thread hand-off (~10-50 us).
MIN_CHUNK_FLOPS = 4_000_000

# Chunks per thread: threads claim chunks as they go, so a thread the scheduler preempts (other
# processes share our cores) holds back at most one small chunk, not half the product.
CHUNKS_PER_THREAD = 2

# [splits, submit, elementwise splits]: set by the runtime (`configure`); one list so a read
# is one lookup.
_STATE = [1, None, 1]

# Chunks of a background kernel's product (the driver may claim them when it joins).
BACKGROUND_CHUNKS = 8

# A chunk of a background product does at least this many flops per element of the operand
# BLAS packs again for it.
_REPACK_FLOPS_PER_ELEMENT = 240

# [background kernels running now]: a read is one lookup on the common path (none).
_BACKGROUND = [0]
_LOCAL = threading.local()

# [enter, leave]: the runtime's calls around an own kernel (`own_kernel`); None: no runtime.
_OWN = [None, None]

__all__ = ["MIN_CHUNK_FLOPS", "CHUNKS_PER_THREAD", "configure", "splits", "elementwise_splits",
           "matmul", "run_parts", "run_elementwise", "balanced_parts", "set_background",
           "BACKGROUND_CHUNKS", "configure_own_kernels", "own_kernel"]


def configure(splits: int, submit=None, elementwise: int | None = None) -> None:
    """Sets how many row chunks a large product is cut into and where the others run.

    Args:
        splits: chunks per large product (1: never split).
        submit: `submit(fn) -> bool` runs `fn()` on an idle helper thread or returns False.
        elementwise: threads a kernel without BLAS calls may use (`run_elementwise`; default
            1: inline).
    """
    splits = max(1, int(splits))
    elementwise = max(1, int(elementwise or 1))
    if submit is None:
        splits = elementwise = 1
    _STATE[:] = [splits, submit, elementwise]


def configure_own_kernels(enter=None, leave=None) -> None:
    """Sets the runtime's calls around an own kernel (`own_kernel`); None: plain calls.

    Args:
        enter: `enter()` before the kernel runs: the split on, BLAS one thread per part.
        leave: `leave()` after it (the budget's configuration back).
    """
    _OWN[:] = [enter, leave] if enter is not None and leave is not None else [None, None]


class _OwnKernel:
    """`with own_kernel():` -- see `own_kernel`."""

    __slots__ = ("entered",)

    def __enter__(self):
        enter = _OWN[0]
        self.entered = enter is not None and _STATE[2] > 1
        if self.entered:
            enter()
        return self

    def __exit__(self, *exc):
        if self.entered:
            leave = _OWN[1]
            if leave is not None:
                leave()
        return False


def own_kernel() -> _OwnKernel:
    """A context for a kernel that splits its own work (`run_parts` over per-image and
    per-bin BLAS calls, copies, transforms): when BLAS has several threads now (a quiet
    machine: `elementwise_splits() > 1`, no split), the runtime gives BLAS one thread and
    turns the split on while the kernel runs, so its parts run on the intra-op helpers;
    otherwise (the split already on, one thread, no runtime) nothing changes.

    Example:
        >>> with own_kernel():
        ...     run_parts(lambda i: None, 2)
    """
    return _OwnKernel()


def set_background(job) -> None:
    """Marks the calling thread as running a background kernel of `job` (None: ends it).

    `job.offer(work) -> bool` hands `work` (a chunk claimer) to whoever waits for the job.
    """
    lock = _BACKGROUND_LOCK
    with lock:
        _BACKGROUND[0] += 1 if job is not None else -1
    _LOCAL.job = job


_BACKGROUND_LOCK = threading.Lock()


def _background_job():
    return getattr(_LOCAL, "job", None) if _BACKGROUND[0] else None


def splits() -> int:
    """The chunks a large product is cut into now (1: no split)."""
    return _STATE[0]


def elementwise_splits() -> int:
    """The threads a kernel without BLAS calls may run on now (1: inline)."""
    return _STATE[2]


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """`np.matmul(a, b, out=out)` for 2-D `a` and `b`, split by rows of `a` or columns of `b`
    (the larger) when large.

    Args:
        a: `[m, k]` matrix.
        b: `[k, n]` matrix.
        out: optional `[m, n]` result buffer.

    Returns:
        The `[m, n]` product (`out` when given).
    """
    threads = _STATE[0]
    if threads > 1 and a.ndim == 2 and b.ndim == 2:
        m, k = a.shape
        flops = 2 * m * k * b.shape[1]
        parts = min(threads * CHUNKS_PER_THREAD, flops // MIN_CHUNK_FLOPS, max(m, b.shape[1]))
        if parts > 1:
            return _split_matmul(a, b, out, int(parts), min(threads, int(parts)), _STATE[1])
    elif _BACKGROUND[0] and a.ndim == 2 and b.ndim == 2:
        job = _background_job()
        if job is not None:
            m, k = a.shape
            n = b.shape[1]
            flops = 2 * m * k * n
            # BLAS packs the operand that is not cut once per chunk: chunks stay large enough
            # that packing it again costs under ~10% of their products.
            repacked = k * min(m, n)
            parts = min(BACKGROUND_CHUNKS, flops // MIN_CHUNK_FLOPS, max(m, n),
                        flops // max(1, _REPACK_FLOPS_PER_ELEMENT * repacked))
            if parts > 1:
                return _split_matmul(a, b, out, int(parts), 2, job.offer)
    if out is None:
        return np.matmul(a, b)
    return np.matmul(a, b, out=out)


def _split_matmul(a, b, out, parts: int, threads: int, submit) -> np.ndarray:
    m, n = a.shape[0], b.shape[1]
    if out is None:
        out = np.empty((m, n), dtype=np.result_type(a, b))
    elif out.shape != (m, n):
        raise ValueError(f"matmul: output shape {out.shape} is not {(m, n)}")
    # NOTE: BLAS packs the whole right operand of each call: cut the larger of rows of `a`
    # and columns of `b`, so the operand packed again per chunk is the small one.
    by_rows = m >= n
    size = m if by_rows else n
    bounds = [size * i // parts for i in range(parts + 1)]

    def part(i: int) -> None:
        lo, hi = bounds[i], bounds[i + 1]
        if by_rows:
            np.matmul(a[lo:hi], b, out=out[lo:hi])
        else:
            np.matmul(a, b[:, lo:hi], out=out[:, lo:hi])

    _run(part, parts, threads, submit)
    return out


def run_parts(fn, parts: int) -> None:
    """Calls `fn(i)` for every `i` in `range(parts)`, on the caller and up to `splits() - 1`
    helpers at once (inline, in order, when the split is off or there is one part).

    Parts are claimed from a shared counter, so a helper that never starts costs nothing;
    `fn` must release the GIL for its bulk (BLAS, NumPy copies, numba `nogil` kernels) and
    write only its own part of the result. The first error of any part is raised here once
    every claimed part has finished.

    Args:
        fn: `fn(i) -> None`, one part of the work.
        parts: the number of parts.
    """
    _run_on(fn, parts, min(_STATE[0], parts))


def _run_on(fn, parts: int, threads: int) -> None:
    """Runs the parts on `threads` pool threads, or inline (helped by a background job's
    partner when one is running) when the budget gives one thread."""
    if threads <= 1:
        job = _background_job() if parts > 1 else None
        if job is not None:
            _run(fn, parts, 2, job.offer)
            return
        for i in range(parts):
            fn(i)
        return
    _run(fn, parts, threads, _STATE[1])


def run_elementwise(fn, parts: int) -> None:
    """`run_parts` for parts that call no BLAS: on up to `elementwise_splits()` threads.

    Args:
        fn: `fn(i) -> None`, one part of the work (releasing the GIL for its bulk).
        parts: the number of parts.
    """
    _run_on(fn, parts, min(_STATE[2], parts))


def balanced_parts(size: int, parts: int) -> list:
    """`parts` contiguous `(lo, hi)` ranges covering `range(size)`, sizes differing by at most 1
    (fewer when `size < parts`; none when `size == 0`)."""
    parts = max(1, min(int(parts), size))
    return [(size * i // parts, size * (i + 1) // parts) for i in range(parts)] if size else []


def _run(fn, parts: int, threads: int, submit) -> None:
    lock = threading.Lock()
    finished = threading.Condition(lock)
    state = {"next": 0, "done": 0, "error": None}

    def work() -> None:
        while True:
            with lock:
                i = state["next"]
                if i >= parts:
                    return
                state["next"] = i + 1
            try:
                fn(i)
            except BaseException as err:  # NOTE: re-raised in the caller's thread
                with lock:
                    state["error"] = state["error"] or err
            with lock:
                state["done"] += 1
                if state["done"] == parts:
                    finished.notify_all()

    for _ in range(threads - 1):
        if not submit(work):
            break
    work()
    with lock:
        while state["done"] < parts:
            finished.wait()
        if state["error"] is not None:
            raise state["error"]
