"""One thread budget per process: TF1's intra-op and inter-op settings, BLAS threads, pools.

Contract: the kernels of this process never run more BLAS/LAPACK threads than the intra-op
budget of the session whose step runs, never more than the cores this process may use, and
never more inter-op workers than the inter-op budget. Pools used for offloaded kernels never
queue work: a kernel goes to an idle worker or runs inline in the step's driver, so no pool
size, however small, can deadlock a step.

The budget (`ThreadBudget`):
- `cores`: the cores this process may use: `os.sched_getaffinity` capped by the cgroup CPU
  quota (v2 `cpu.max`, v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`), or the `--threads` of
  `tensorflux server` (`set_process_threads`).
- `intra_op`: `ConfigProto.intra_op_parallelism_threads`, 0 = `cores`.
- `inter_op`: `ConfigProto.inter_op_parallelism_threads`, 0 = `cores`; negative runs every op
  in the caller's thread. It counts kernels of a step running at once, the step's driver
  thread included, so a pool has `inter_op - 1` workers.

Pools, as in TF1: sessions share one process-wide pool sized by the first session that needs
it, unless `use_per_session_threads` (a pool per session) or `session_inter_op_thread_pool`
(a list of pools; one with a `global_name` is shared by name and must keep its size) is set;
`RunOptions.inter_op_thread_pool` picks one of the session's pools (-1: the caller's thread).

BLAS threads (set through threadpoolctl, process-wide, only when the value changes, so a
step costs one comparison):

    blas = max(1, min(intra_op, cores - others) // k)

- `k` = 1 + the offloaded kernels running now: when inter-op parallelism really runs k
  kernels at once they split the intra-op threads instead of multiplying them.
- `others` = runnable threads of other processes on our cores, sampled from `/proc` at most
  every `PROBE_SECS` at a step's start (the larger of the last two samples). OpenBLAS splits a
  product statically into one part per thread and waits for the slowest: a part whose core
  is taken by another process stalls the whole product (10x slower steps were measured with
  2 BLAS threads and two busy processes on 2 cores), so a thread is only given a core that
  is free. TF's Eigen pool steals work and does not need this.

Intra-op split: when BLAS gets fewer threads than the kernel may use (`intra_op_splits`),
large kernels (MatMul, _FusedMatMul, Conv2D, _FusedConv2D and the backprops on either path,
im2col or frequency domain, and the compiled pooling kernels) are cut into parts run at once
on a small helper pool (`lib/numerics/intra_op.py`), one BLAS thread each, so a loaded
machine still gives a kernel as many runnable threads as the budget allows. On a quiet
machine (BLAS with several threads) large kernels without BLAS calls (compiled updates and
epilogues, the softmax cross-entropy's row blocks) split over BLAS's thread count instead
(`intra_op.run_elementwise`): BLAS's threads are idle while they run, and TF's Eigen kernels
use its intra-op pool the same way.

Own kernels (`intra_op.own_kernel`: the convolutions) take the split on a quiet machine too:
while one runs, BLAS gets one thread and the split the threads BLAS had (`own`, counted like
`busy`), so its per-image and per-bin BLAS calls, copies and transforms run on every core the
budget gives instead of one (BLAS does not thread calls that small).

The limits hold while a session (or a server) of the process lives; the original BLAS
thread counts come back when the last one closes. numba kernels call `intra_op_threads()`
(or `sync_numba_threads()`) at entry; numba is never imported here.
"""

from __future__ import annotations

import dataclasses
import math
import os
import queue
import sys
import threading
import time

from tensorflux.framework import errors
from tensorflux.lib.numerics import intra_op
from tensorflux.runtime import process_config

PROBE_SECS = 0.5
_CGROUP_ROOT = "/sys/fs/cgroup"
_SELF_CGROUP = "/proc/self/cgroup"

__all__ = [
    "ThreadBudget", "KernelPool", "SessionThreads", "affinity_cores", "cgroup_cpu_quota",
    "detect_cores", "process_cores", "set_process_threads", "blas_threads", "intra_op_threads",
    "sync_numba_threads", "default_pool", "share_cores", "refresh",
    "concurrent_kernel_started", "concurrent_kernel_finished",
]


# -- how many cores --------------------------------------------------------------------------

def affinity_cores(getaffinity=getattr(os, "sched_getaffinity", None)) -> int:
    """The number of CPUs this process may run on (its affinity mask)."""
    if getaffinity is not None:
        try:
            return max(1, len(getaffinity(0)))
        except OSError:
            pass
    return max(1, os.cpu_count() or 1)


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _quota_v2(text: str | None) -> float | None:
    if not text:
        return None
    parts = text.split()
    if len(parts) != 2 or parts[0] == "max":
        return None
    quota, period = int(parts[0]), int(parts[1])
    return quota / period if quota > 0 and period > 0 else None


def _quota_v1(quota_text: str | None, period_text: str | None) -> float | None:
    if not quota_text or not period_text:
        return None
    quota, period = int(quota_text.strip()), int(period_text.strip())
    return quota / period if quota > 0 and period > 0 else None


def _ancestors(path: str):
    path = "/" + path.strip("/")
    while True:
        yield path
        if path == "/":
            return
        path = path.rsplit("/", 1)[0] or "/"


def cgroup_cpu_quota(root: str = _CGROUP_ROOT, self_cgroup: str = _SELF_CGROUP) -> float | None:
    """The CPU quota of this process's cgroup in cores (v2 or v1), or None when unlimited.

    Args:
        root: where the cgroup file systems are mounted.
        self_cgroup: this process's cgroup membership file (`/proc/self/cgroup`).

    Returns:
        The smallest quota / period of the cgroup and its ancestors, or None.
    """
    limits = []
    for line in (_read(self_cgroup) or "").splitlines():
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if controllers == "":
            for place in _ancestors(path):
                limits.append(_quota_v2(_read(os.path.join(root, place.lstrip("/"),
                                                          "cpu.max"))))
        elif "cpu" in controllers.split(","):
            for mount in (controllers, "cpu", "cpu,cpuacct"):
                for place in _ancestors(path):
                    base = os.path.join(root, mount, place.lstrip("/"))
                    limits.append(_quota_v1(_read(os.path.join(base, "cpu.cfs_quota_us")),
                                            _read(os.path.join(base, "cpu.cfs_period_us"))))
    limits = [q for q in limits if q is not None]
    return min(limits) if limits else None


def detect_cores(root: str = _CGROUP_ROOT, self_cgroup: str = _SELF_CGROUP,
                 getaffinity=getattr(os, "sched_getaffinity", None)) -> int:
    """The cores this process may use: its affinity, capped by its cgroup CPU quota."""
    cores = affinity_cores(getaffinity)
    quota = cgroup_cpu_quota(root, self_cgroup)
    if quota is not None:
        cores = min(cores, max(1, math.ceil(quota - 1e-9)))
    return cores


_PROCESS_THREADS: list = []


def set_process_threads(threads: int | None) -> None:
    """Sets this process's core budget (the `--threads` of `tensorflux server`); None: detect.

    Raises:
        ValueError: `threads` is not a positive number.
    """
    if threads is not None and int(threads) < 1:
        raise ValueError(f"threads must be a positive number of cores, got {threads}")
    _PROCESS_THREADS[:] = [] if threads is None else [int(threads)]


def process_threads_set() -> bool:
    """Whether this process's core budget was set (`set_process_threads`), not detected."""
    return bool(_PROCESS_THREADS)


_DETECTED: list = []


def process_cores() -> int:
    """The cores this process may use (`set_process_threads`, else `detect_cores()`, once)."""
    if _PROCESS_THREADS:
        return _PROCESS_THREADS[0]
    if not _DETECTED:
        _DETECTED.append(detect_cores())
    return _DETECTED[0]


def share_cores(cores: int, ps_tasks: int, worker_tasks: int) -> tuple[int, int]:
    """Threads per parameter-server task and per worker task sharing `cores` on one machine.

    A PS task mostly applies updates and serves variables: one thread each. Workers share
    what is left, each at least one.

    Example: `share_cores(2, 1, 2) == (1, 1)`, `share_cores(8, 1, 2) == (1, 3)`.
    """
    left = cores - ps_tasks
    per_worker = max(1, left // worker_tasks) if worker_tasks else 0
    return 1, per_worker


@dataclasses.dataclass(frozen=True)
class ThreadBudget:
    """The thread budget of a session: cores, intra-op threads, inter-op parallelism."""

    cores: int
    intra_op: int
    inter_op: int

    @classmethod
    def from_config(cls, config=None, cores: int | None = None) -> ThreadBudget:
        """The budget a `ConfigProto` asks for, 0s decided from `cores` (default: this process).

        Raises:
            InvalidArgumentError: a negative `intra_op_parallelism_threads`.
        """
        cores = process_cores() if cores is None else max(1, int(cores))
        intra = int(config.intra_op_parallelism_threads) if config is not None else 0
        inter = int(config.inter_op_parallelism_threads) if config is not None else 0
        intra = intra or process_config.defaults.intra_op_threads
        inter = inter or process_config.defaults.inter_op_threads
        if intra < 0:
            raise errors.InvalidArgumentError(
                None, None, f"ConfigProto.intra_op_parallelism_threads must be >= 0, got {intra}")
        return cls(cores, intra or cores, inter or cores)

    @property
    def pool_workers(self) -> int:
        """Workers of an inter-op pool of this budget (the driver is the other thread)."""
        return max(0, self.inter_op - 1)


def blas_threads(intra_op: int, cores: int, others: float = 0.0, concurrent: int = 1) -> int:
    """BLAS threads per kernel (the policy of the module docstring)."""
    free = cores - int(math.floor(others + 0.5))
    return max(1, min(intra_op, cores, free) // max(1, concurrent))


def intra_op_splits(intra_op: int, cores: int, blas: int, concurrent: int = 1) -> int:
    """Row chunks a large product is cut into (`lib/numerics/intra_op.py`), each chunk run
    on its own thread with `blas` BLAS threads: the intra-op threads a kernel may use that
    BLAS does not (under load BLAS gets one thread; the split gives the product the others,
    without OpenBLAS's spin synchronisation)."""
    return max(1, max(1, min(intra_op, cores) // max(1, concurrent)) // max(1, blas))


# -- load of other processes -----------------------------------------------------------------

def _procs_running(stat_path: str = "/proc/stat") -> int:
    with open(stat_path, "rb") as f:
        for line in f:
            if line.startswith(b"procs_running"):
                return int(line.split()[1])
    return 0


def _own_running(task_dir: str = "/proc/self/task") -> int:
    count = 0
    for tid in os.listdir(task_dir):
        text = _read(os.path.join(task_dir, tid, "stat"))
        if text:
            state = text[text.rfind(")") + 2:text.rfind(")") + 3]
            count += state == "R"
    return count


def others_running(cores: int, cpu_count: int | None = None, stat_path: str = "/proc/stat",
                   task_dir: str = "/proc/self/task") -> float:
    """Runnable threads of other processes expected on our `cores` (from /proc, now).

    The machine's runnable threads less this process's, scaled by the share of the machine's
    CPUs that are ours.
    """
    try:
        others = max(0, _procs_running(stat_path) - _own_running(task_dir))
    except OSError:
        return 0.0
    total = max(cores, cpu_count or os.cpu_count() or cores)
    return others * cores / total


# -- BLAS limits -----------------------------------------------------------------------------

class _Blas:
    """The BLAS libraries loaded in the process, through threadpoolctl (imported once)."""

    def __init__(self):
        self.controllers = None
        self.original: list = []
        self.current = None

    def _load(self) -> None:
        if self.controllers is not None:
            return
        try:
            import threadpoolctl
        except ImportError:  # NOTE: a declared dependency; without it BLAS keeps its default.
            self.controllers = []
            return
        found = threadpoolctl.ThreadpoolController().select(user_api="blas")
        self.controllers = list(found.lib_controllers)
        self.original = [c.get_num_threads() for c in self.controllers]

    def set(self, threads: int) -> None:
        self._load()
        if threads == self.current:
            return
        for controller in self.controllers:
            controller.set_num_threads(threads)
        self.current = threads

    def restore(self) -> None:
        if self.controllers:
            for controller, threads in zip(self.controllers, self.original):
                if threads is not None:
                    controller.set_num_threads(threads)
        self.current = None


class _Process:
    """Process-wide state: live budgets, the BLAS target and the load samples."""

    def __init__(self, probe=None, blas=None):
        # NOTE: reentrant: a session collected while another is being set up (its __del__
        # closes it) releases from inside `acquire` on the same thread.
        self.lock = threading.RLock()
        self.probe = probe or others_running
        self.blas = blas or _Blas()
        self.users = 0
        self.intra = None
        self.cores = 1
        self.busy = 0
        self.own = 0  # own kernels running now (intra_op.own_kernel)
        self.others = (0.0, 0.0)
        self.next_probe = 0.0
        self.threads = 1
        self.splits = 1
        self.elementwise = 1
        self.intra_pool = None
        self.global_pools: dict = {}

    def acquire(self, budget: ThreadBudget) -> None:
        with self.lock:
            self.users += 1
            if self.users == 1:
                intra_op.configure_own_kernels(self.own_started, self.own_finished)
            self._use(budget, probe=True)

    def release(self) -> None:
        with self.lock:
            self.users -= 1
            if self.users <= 0:
                self.users = 0
                self.intra = None
                intra_op.configure_own_kernels()
                self.blas.restore()
                self._set_splits(1)

    def _use(self, budget: ThreadBudget, probe: bool) -> None:
        self.intra = budget.intra_op
        self.cores = budget.cores
        now = time.monotonic()
        if min(self.intra, self.cores) <= 1:
            self.others = (0.0, 0.0)
            self.next_probe = now + PROBE_SECS
        elif probe or now >= self.next_probe:
            self.others = (self.probe(self.cores), self.others[0])
            self.next_probe = now + PROBE_SECS
        self._apply()

    def _apply(self) -> None:
        if self.intra is None:
            return
        self.threads = blas_threads(self.intra, self.cores, max(self.others), 1 + self.busy)
        if self.own and self.threads > 1:
            # An own kernel runs (intra_op.own_kernel): its parts take BLAS's threads (and
            # each part's numba kernels one thread, `intra_op_threads`).
            self.threads = 1
            self.blas.set(1)
            splits = intra_op_splits(self.intra, self.cores, 1, 1 + self.busy)
            self._set_splits(splits, splits)
            return
        self.blas.set(self.threads)
        splits = intra_op_splits(self.intra, self.cores, self.threads, 1 + self.busy)
        # Kernels without BLAS calls use BLAS's threads when it has several (free cores).
        self._set_splits(splits, self.threads)

    def _set_splits(self, splits: int, elementwise: int = 1) -> None:
        if (splits, elementwise) == (self.splits, self.elementwise):
            return
        self.splits, self.elementwise = splits, elementwise
        helpers = max(splits, elementwise) - 1
        if helpers and (self.intra_pool is None or self.intra_pool.num_threads < helpers):
            self.intra_pool = KernelPool(helpers, "tfx-intra-op", counted=False)
        intra_op.configure(splits, self.intra_pool.try_run if helpers else None, elementwise)

    def refresh(self, budget: ThreadBudget) -> None:
        with self.lock:
            self._use(budget, probe=False)

    def refresh_current(self) -> None:
        with self.lock:
            if self.intra is not None:
                self._use(ThreadBudget(self.cores, self.intra, 0), probe=False)

    def own_started(self) -> None:
        with self.lock:
            self.own += 1
            self._apply()

    def own_finished(self) -> None:
        with self.lock:
            self.own = max(0, self.own - 1)
            self._apply()

    def kernel_started(self) -> None:
        with self.lock:
            self.busy += 1
            self._apply()

    def kernel_finished(self) -> None:
        with self.lock:
            self.busy -= 1
            self._apply()


_PROCESS = _Process()


def refresh() -> None:
    """Re-samples the load when due (a step of a worker task starts; sessions do it too)."""
    if time.monotonic() >= _PROCESS.next_probe:
        _PROCESS.refresh_current()


def concurrent_kernel_started() -> None:
    """Counts a kernel that runs now beside the step's driver (the fast path's background
    kernels): BLAS and the intra-op split then share the budget with it."""
    _PROCESS.kernel_started()


def concurrent_kernel_finished() -> None:
    """Ends what `concurrent_kernel_started` counted."""
    _PROCESS.kernel_finished()


def intra_op_threads() -> int:
    """Threads a kernel may use now (numba's `set_num_threads`, a kernel's own split).

    While a session or server lives: its BLAS thread count (the policy above); before any:
    the cores of the process.
    """
    process = _PROCESS
    return process.threads if process.intra is not None else process_cores()


_NUMBA_LOCAL = threading.local()


def sync_numba_threads() -> int:
    """Sets numba's thread count for the calling thread from the budget (if numba is loaded).

    numba's count is per thread, so a numba kernel calls this at entry; it costs a comparison
    when nothing changed. Returns the thread count.
    """
    threads = intra_op_threads()
    numba = sys.modules.get("numba")
    if numba is not None and getattr(_NUMBA_LOCAL, "threads", None) != threads:
        limit = int(getattr(numba.config, "NUMBA_NUM_THREADS", threads))
        numba.set_num_threads(max(1, min(threads, limit)))
        _NUMBA_LOCAL.threads = threads
    return threads


# -- pools -----------------------------------------------------------------------------------

class KernelPool:
    """Workers for offloaded kernels: `try_run(fn)` hands `fn` to an idle worker or refuses.

    Nothing ever waits in a queue behind a busy worker, so a kernel that blocks (a `py_func`
    running a nested step) cannot starve the step it belongs to. Threads start on demand, at
    most `num_threads`; `close()` ends them.
    """

    def __init__(self, num_threads: int, name: str = "tfx-inter-op", counted: bool = True):
        self.num_threads = max(0, int(num_threads))
        self.name = name
        self.counted = counted
        self._lock = threading.Lock()
        self._work: queue.SimpleQueue = queue.SimpleQueue()
        self._idle = 0
        self._started = 0
        self._closed = False

    @property
    def started(self) -> int:
        """Worker threads started so far (never more than `num_threads`)."""
        return self._started

    def try_run(self, fn, counted: bool = True) -> bool:
        """Runs `fn()` on an idle worker and returns True, or returns False at once.

        `counted=False`: the caller has counted the kernel in the thread budget itself
        (`concurrent_kernel_started`), so the worker does not count it again.
        """
        with self._lock:
            if self._closed:
                return False
            if self._idle:
                self._idle -= 1
            elif self._started < self.num_threads:
                self._started += 1
                threading.Thread(target=self._serve, name=f"{self.name}-{self._started}",
                                 daemon=True).start()
            else:
                return False
            # NOTE: put under the lock, so a `close()` cannot slip its stop marks in before it.
            self._work.put(fn if counted else (fn,))
        return True

    def _serve(self) -> None:
        process = _PROCESS
        while True:
            fn = self._work.get()
            if fn is None:
                return
            if type(fn) is tuple:  # counted by the caller
                fn = fn[0]
                try:
                    fn()
                finally:
                    with self._lock:
                        self._idle += 1
                continue
            if not self.counted:  # intra-op helpers: part of a kernel already counted
                try:
                    fn()
                finally:
                    with self._lock:
                        self._idle += 1
                continue
            process.kernel_started()
            try:
                fn()
            finally:
                process.kernel_finished()
                with self._lock:
                    self._idle += 1

    def close(self) -> None:
        """Ends the workers once their current kernels are done."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            started = self._started
        for _ in range(started):
            self._work.put(None)


def default_pool(budget: ThreadBudget | None = None) -> KernelPool:
    """The process-wide inter-op pool, sized by the first budget that asks for it."""
    pools = _PROCESS.global_pools
    pool = pools.get("")
    if pool is None:
        with _PROCESS.lock:
            pool = pools.get("")
            if pool is None:
                budget = budget or ThreadBudget.from_config(None)
                pool = pools[""] = KernelPool(budget.pool_workers)
    return pool


def _named_pool(name: str, workers: int) -> KernelPool:
    with _PROCESS.lock:
        pool = _PROCESS.global_pools.get("/" + name)
        if pool is None:
            pool = _PROCESS.global_pools["/" + name] = KernelPool(workers, f"tfx-{name}")
        elif pool.num_threads != workers:
            raise errors.InvalidArgumentError(
                None, None, f"session_inter_op_thread_pool '{name}' exists with "
                f"{pool.num_threads + 1} threads; this session asks for {workers + 1}.")
        return pool


class SessionThreads:
    """The budget and inter-op pools of one session (see the module docstring).

    `before_step()` is called at the start of each step; `pool_for(options)` gives the pool a
    step offloads kernels to (None: everything in the caller's thread), `default_pool` the
    one of steps without options.
    """

    def __init__(self, config=None, cores: int | None = None):
        self.budget = ThreadBudget.from_config(config, cores)
        self.intra = self.budget.intra_op
        self._own: list = []
        self.pools = self._make_pools(config)
        self.default_pool = self.pool_for(None)
        self._closed = False
        _PROCESS.acquire(self.budget)

    def _make_pools(self, config) -> list:
        budget = self.budget
        options = list(config.session_inter_op_thread_pool) if config is not None else []
        if options:
            pools = []
            for option in options:
                threads = int(option.num_threads) or budget.inter_op
                if option.global_name:
                    pools.append(_named_pool(option.global_name, max(0, threads - 1)))
                else:
                    pool = KernelPool(max(0, threads - 1))
                    self._own.append(pool)
                    pools.append(pool)
            return pools
        if budget.inter_op < 0:
            return [None]
        if config is not None and config.use_per_session_threads:
            pool = KernelPool(budget.pool_workers)
            self._own.append(pool)
            return [pool]
        return [default_pool(budget)]

    def before_step(self, _monotonic=time.monotonic) -> None:
        """Keeps the BLAS limit on this session's budget and the load samples fresh."""
        process = _PROCESS
        if process.intra != self.intra or _monotonic() >= process.next_probe:
            process.refresh(self.budget)

    def pool_for(self, options=None):
        """The pool `RunOptions.inter_op_thread_pool` selects (None: the caller's thread).

        Raises:
            InvalidArgumentError: the index names no pool of this session.
        """
        index = int(options.inter_op_thread_pool) if options is not None else 0
        if index == -1:
            return None
        if not 0 <= index < len(self.pools):
            raise errors.InvalidArgumentError(
                None, None, f"Invalid inter_op_thread_pool: {index} (this session has "
                f"{len(self.pools)} pool(s); -1 runs in the caller's thread)")
        pool = self.pools[index]
        return pool if pool is not None and pool.num_threads > 0 else None

    def close(self) -> None:
        """Ends this session's own pools and releases its hold on the BLAS limits."""
        if self._closed:
            return
        self._closed = True
        for pool in self._own:
            pool.close()
        _PROCESS.release()
