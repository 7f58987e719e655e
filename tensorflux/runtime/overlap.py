"""Inter-op overlap in the straight-line fast path: an independent heavy kernel runs in the
background on the inter-op pool while the step's driver goes on with other work.

TF's executor runs every ready kernel at once on its inter-op pool; the fast path runs a plan
in one thread, one kernel after another. On two cores that leaves one core idle whenever the
driver runs Python, elementwise kernels or small products that scale badly on two BLAS threads
(the M = 32 cell products of an unrolled RNN), while an independent large product (the output
layer's weight gradient) waits its turn. Here the plan decides, once, which heavy kernels may
run in the background and in what order the driver runs the rest:

- `schedule(plan, ...)` simulates the plan on two lanes (the driver, and one background
  kernel at a time) with a cost model (products' flops from static shapes, a fixed cost for
  other kernels) and returns the driver's program: `("run", item)`, `("spawn", item)` (start
  the kernel in the background) and `("join", item)` (its value is needed, or the lane is
  free for the next one). A spawned kernel is one that is not on the critical path: another
  ready kernel leads to at least as much work after it (a pair: `dW = x^T dy` beside
  `dx = dy W^T`), and for a product too large to pair, a path longer than its own by a
  millisecond (a chain of small kernels). Its descendants wait for its join;
  every other kernel keeps its program order. Kernels that share a variable (ref reads,
  values aliasing a variable's buffer, updates) and stateful kernels keep their relative
  order, so an update never moves before or after a read it was ordered with.
- `StepOverlap` (one per step) runs it: `spawn` hands the kernel to an idle pool worker when
  the cost model says so (`worth_spawning`, on the actual operands) and the pool has
  one, else runs it inline at once; `join` waits for it, running the parts of its products
  (`intra_op` row/column chunks) nobody has claimed yet, so a driver that reaches the join
  early helps instead of waiting, and runs the whole kernel when no worker has started it.
  While a kernel runs in the background the thread budget counts it (BLAS gets
  `intra_op // 2` threads: two single-thread products on two cores). Kernels go to the
  background only while BLAS has several threads (free cores): under load the budget already
  splits large kernels over the cores, and a background kernel would wait for a time slice.
  Off unless `TFX_OVERLAP=1`; `inter_op_parallelism_threads=1` and
  `RunOptions.inter_op_thread_pool=-1` also run everything in the driver.

Gradients of `minimize()` are gated per op (`GATE_OP`: a `tuple` of an op's input gradients
waits for all of them), so an MLP or an LSTM trained that way offers few independent kernels:
the pair of an op's gradients (run together, then joined) and the updates.

Values are unchanged: the same kernels run on the same inputs; only the thread differs (the
chunks of a product are the same dot products). Errors: the first failure in program order
(the plan's order) is raised, with its node; a failed step waits for its background kernels,
so nothing runs after `run` returns or raises.
"""

from __future__ import annotations

import heapq
import math
import os
import threading

from tensorflux.lib.numerics import intra_op
from tensorflux.runtime import thread_budget
from tensorflux.runtime.plan import PLAIN

# Kernels that may run in the background (pure: no state, no refs, one output).
BACKGROUND_OPS = frozenset({
    "MatMul", "_FusedMatMul", "BatchMatMul", "BatchMatMulV2", "Conv2D", "_FusedConv2D",
    "Conv2DBackpropInput", "Conv2DBackpropFilter",
})

# Dense variable updates (in place, through refs): the variable's other users keep their order
# around them (`_order_keys`), so one may run beside unrelated work.
BACKGROUND_UPDATES = frozenset({
    "ApplyGradientDescent", "ApplyMomentum", "ApplyAdam", "ApplyRMSProp", "ApplyAdagrad",
})
# An update counts this many "flops" per element (one pass over several buffers).
_UPDATE_FLOPS_PER_ELEMENT = 16

# The cost model deciding per kernel, from its operands' shapes:
# - smaller than MIN_SPAWN_FLOPS it runs inline: a hand-off costs ~20-50 us, a 16 MFLOP
#   product ~0.2 ms on one core;
# - a product larger than MAX_PAIR_FLOPS keeps BLAS's threads and runs in the driver: it
#   scales well on two BLAS threads (two single-thread products gain nothing), while small
#   products (the M = 32 cell products of an RNN: 34-67 MFLOP) scale badly and pair up.
#   Updates (memory-bound passes) have no upper limit.
MIN_SPAWN_FLOPS = 16_000_000
MAX_PAIR_FLOPS = 160_000_000

# Cost model of the plan-time simulation (microseconds).
_FLOPS_PER_US = 60_000.0  # one core's sgemm rate, roughly
_TWO_THREAD_GAIN = 1.6  # a product on two BLAS threads
_OTHER_US = 12.0  # a kernel that is not a product (call, small elementwise pass)
_UNKNOWN_FLOPS = 20_000_000  # a product whose static shapes are not known
_LARGE_LEAD_US = 1000.0  # see `_pick_background`

__all__ = ["BACKGROUND_OPS", "BACKGROUND_UPDATES", "MIN_SPAWN_FLOPS", "MAX_PAIR_FLOPS",
           "enabled", "worth_spawning", "schedule", "StepOverlap", "product_flops",
           "runtime_check", "static_large", "is_candidate", "first_in_order"]


def enabled() -> bool:
    """True only with `TFX_OVERLAP=1`: off by default, because on a quiet 2-core machine the
    overlapped MLP and LSTM steps measured 13-45% slower than inline ones (OpenBLAS's idle
    worker keeps spinning beside the background product)."""
    return os.environ.get("TFX_OVERLAP", "0") == "1"


# -- flops --------------------------------------------------------------------------------

def _prod(values) -> int:
    result = 1
    for v in values:
        result *= int(v)
    return result


def product_flops(op: str, attrs: dict, shapes) -> int | None:
    """Multiply-add flops of a background op from its inputs' shapes (None: unknown).

    Args:
        op: the op type (one of `BACKGROUND_OPS`).
        attrs: the node's attrs.
        shapes: the input shapes (tuples of ints, or None where unknown); for the
            `*_sizes` inputs of the convolution backprops, the shape given as a value.
    """
    try:
        if op in BACKGROUND_UPDATES:
            sizes = [_prod(shape) for shape in shapes if shape is not None]
            return _UPDATE_FLOPS_PER_ELEMENT * max(sizes) if sizes else None
        if op in ("MatMul", "_FusedMatMul"):
            a, b = shapes[0], shapes[1]
            if a is None or b is None or len(a) != 2 or len(b) != 2:
                return None
            m, k = (a[1], a[0]) if attrs.get("transpose_a") else (a[0], a[1])
            n = b[0] if attrs.get("transpose_b") else b[1]
            return 2 * m * k * n
        if op in ("BatchMatMul", "BatchMatMulV2"):
            a, b = shapes[0], shapes[1]
            if a is None or b is None or len(a) < 2 or len(b) < 2:
                return None
            batch = max(_prod(a[:-2]), _prod(b[:-2]))
            m = a[-1] if attrs.get("adj_x") else a[-2]
            k = a[-2] if attrs.get("adj_x") else a[-1]
            n = b[-2] if attrs.get("adj_y") else b[-1]
            return 2 * batch * m * k * n
        if op in ("Conv2D", "_FusedConv2D"):
            x, w = shapes[0], shapes[1]
            if x is None or w is None or len(x) != 4 or len(w) != 4:
                return None
            strides = list(attrs.get("strides") or [1, 1, 1, 1])
            step = max(1, _prod(strides))
            return 2 * x[0] * x[1] * x[2] * _prod(w) // step
        if op == "Conv2DBackpropInput":
            w, dy = shapes[1], shapes[2]
            if w is None or dy is None:
                return None
            return 2 * _prod(dy) * _prod(w[:3])
        if op == "Conv2DBackpropFilter":
            sizes, dy = shapes[1], shapes[2]
            if sizes is None or dy is None:
                return None
            return 2 * _prod(dy) * _prod(sizes[:3])
    except (TypeError, ValueError, IndexError):
        return None
    return None


def worth_spawning(op: str, flops, large: bool = False) -> bool:
    """The cost model: whether a kernel of `op` doing `flops` goes to the background
    (`large`: a product beside a long driver's path, without the pairing limit)."""
    if flops is None or flops < MIN_SPAWN_FLOPS:
        return False
    return large or op in BACKGROUND_UPDATES or flops <= MAX_PAIR_FLOPS


def runtime_check(op: str, attrs: dict, large: bool = False):
    """`worth(args) -> bool`: the cost model on the actual operands of a background kernel
    (`large`: the plan sent a product too large to pair beside a long driver's path, so it
    has no upper limit)."""
    sized = op in ("Conv2DBackpropFilter",)

    def worth(args) -> bool:
        shapes = []
        for k, arg in enumerate(args):
            shape = getattr(arg, "shape", None)
            if sized and k == 1 and shape is not None and len(shape) == 1:
                shape = tuple(int(v) for v in arg)
            shapes.append(shape)
        return worth_spawning(op, product_flops(op, attrs, shapes), large)

    return worth


def _static_shape(src, idx):
    op = getattr(src, "source_op", None)
    outputs = getattr(op, "_outputs", None)
    if not outputs or idx >= len(outputs):
        return None
    dims = outputs[idx]._shape_as_list()
    if dims is None or any(d is None for d in dims):
        return None
    return tuple(int(d) for d in dims)


def static_large(item) -> bool:
    """Whether `item` is a product known (static shapes) to be too large to pair."""
    return item.node.op not in BACKGROUND_UPDATES and _static_flops(item) > MAX_PAIR_FLOPS


def _static_flops(item) -> float:
    node = item.node
    shapes = [_static_shape(src, idx) for src, idx in node.inputs]
    found = product_flops(node.op, node.attrs, shapes)
    return float(_UNKNOWN_FLOPS if found is None else found)


# -- plan time: the driver's program ------------------------------------------------------

def is_candidate(item) -> bool:
    """Whether `item` may run in the background (pure heavy kernel, plain inputs)."""
    node = item.node
    if item.mode != PLAIN or item.n_outputs != 1 or item.deref:
        return False
    if node.op in BACKGROUND_UPDATES:
        return True
    return (node.op in BACKGROUND_OPS and not node.op_def.is_stateful
            and not any(dtype.is_ref_dtype for dtype in node.output_dtypes))


# Ops whose outputs may be views of their inputs' buffers (NumPy reshapes, slices and
# transposes): a view of a variable's value is read when its consumer runs.
_VIEW_OPS = frozenset({
    "Identity", "IdentityN", "Snapshot", "StopGradient", "PreventGradient", "Reshape",
    "Squeeze", "ExpandDims", "Transpose", "ConjugateTranspose", "Slice", "StridedSlice",
    "Split", "SplitV", "Unpack", "BroadcastTo", "Bitcast", "EnsureShape", "CheckNumerics",
    "Print", "PlaceholderWithDefault", "Real", "MatrixDiagPart", "MatrixDiagPartV3",
})


def _order_keys(plan, pass_through) -> list:
    """Per item, the keys whose users keep their relative order: the variables it reads or
    writes (through refs or values aliasing a variable's buffer: pass-throughs and views)
    and "stateful"."""
    alias: dict = {}  # (id(node), idx) -> frozenset of variable keys
    keys = []
    for item in plan.items:
        node = item.node
        mine = set()
        for src, idx in node.inputs:
            mine |= alias.get((id(src), idx), frozenset())
        if node.op_def.is_stateful and not any(
                src.output_dtypes[idx].is_ref_dtype for src, idx in node.inputs):
            # NOTE: updates through refs are ordered by their variables' keys alone.
            mine.add("stateful")
        keys.append(mine)
        ref_keys = frozenset().union(*(
            alias.get((id(src), idx), frozenset()) for src, idx in node.inputs
            if src.output_dtypes[idx].is_ref_dtype))
        for idx, dtype in enumerate(node.output_dtypes):
            if dtype.is_ref_dtype:
                # A ref output (Assign's, a ref Identity's) is its ref input's variable.
                alias[(id(node), idx)] = ref_keys or frozenset({("var", id(node))})
            elif item.kernel is pass_through or node.op in _VIEW_OPS:
                if mine - {"stateful"}:
                    alias[(id(node), idx)] = frozenset(mine - {"stateful"})
            elif node.op_def.is_stateful:
                alias[(id(node), idx)] = frozenset({"stateful"})
    return keys


def schedule(plan, pass_through, candidate=is_candidate, flops=_static_flops) -> list | None:
    """The driver's program for `plan`: `[(action, item)]`, action in run/spawn/join.

    Args:
        plan: a `Plan` without control flow.
        pass_through: the kernel of pass-through ops (their values alias their input).
        candidate: `candidate(item) -> bool`, kernels allowed in the background.
        flops: `flops(item) -> float`, a background kernel's estimated flops.

    Returns:
        The program, or None when nothing runs in the background (keep the plan's order).
    """
    items = plan.items
    position = {id(item.node): i for i, item in enumerate(items)}
    succs: list = [[] for _ in items]
    preds = [0] * len(items)

    def edge(a: int, b: int) -> None:
        succs[a].append(b)
        preds[b] += 1

    for i, item in enumerate(items):
        for src, _ in item.node.inputs:
            edge(position[id(src)], i)
        for src in item.node.control_inputs:
            j = position.get(id(src))
            if j is not None:
                edge(j, i)
    last: dict = {}
    for i, keys in enumerate(_order_keys(plan, pass_through)):
        for key in keys:
            j = last.get(key)
            if j is not None:
                edge(j, i)
            last[key] = i
    heavy = [candidate(item) for item in items]
    cost1 = [flops(item) / _FLOPS_PER_US if heavy[i] else _OTHER_US
             for i, item in enumerate(items)]
    spawnable = [heavy[i] and worth_spawning(item.node.op, cost1[i] * _FLOPS_PER_US)
                 for i, item in enumerate(items)]
    large = [heavy[i] and not spawnable[i] and cost1[i] * _FLOPS_PER_US > MAX_PAIR_FLOPS
             for i in range(len(items))]
    if not any(spawnable) and not any(large):
        return None
    cost2 = [c / _TWO_THREAD_GAIN if heavy[i] else c for i, c in enumerate(cost1)]
    # Bottom levels: the longest remaining path from each item (edges go forward in order).
    bottom = [0.0] * len(items)
    for i in range(len(items) - 1, -1, -1):
        bottom[i] = cost2[i] + max((bottom[s] for s in succs[i]), default=0.0)
    ready = [i for i in range(len(items)) if preds[i] == 0]
    heapq.heapify(ready)
    program: list = []
    spawned = 0
    clock = 0.0
    background = None  # (index, finish time)

    def release(i: int) -> None:
        for s in succs[i]:
            preds[s] -= 1
            if preds[s] == 0:
                heapq.heappush(ready, s)

    while ready or background is not None:
        if background is None:
            choice = _pick_background(ready, spawnable, bottom, large, cost1)
            if choice is not None:
                ready.remove(choice)
                heapq.heapify(ready)
                program.append(("spawn", items[choice]))
                spawned += 1
                background = (choice, clock + cost1[choice])
                continue
        elif not ready or (background[1] <= clock and
                           _pick_background(ready, spawnable, bottom, large, cost1) is not None):
            # Joined when its value is needed, or when it should be done and another
            # kernel could take the lane.
            program.append(("join", items[background[0]]))
            clock = max(clock, background[1])
            release(background[0])
            background = None
            continue
        i = heapq.heappop(ready)
        program.append(("run", items[i]))
        clock += cost1[i] if background is not None else cost2[i]
        release(i)
    if not spawned:
        return None
    if len([1 for action, _ in program if action != "join"]) != len(items):
        return None  # NOTE: not reachable for an acyclic plan; keep the plan's order then
    return program


def _pick_background(ready, spawnable, bottom, large, cost1):
    """The least critical ready kernel the cost model sends to the background, when some
    other ready kernel leads to at least as much work (the driver's lane then has work as
    long as the background one). A product too large to pair (`large`) goes only beside a
    driver's path longer than its own by `_LARGE_LEAD_US` (a chain of small kernels that
    cannot use two cores: an RNN's backward pass beside the output layer's weight gradient);
    where the driver gets there first, its join shares the remaining chunks."""
    best = None
    for i in ready:
        if (spawnable[i] or large[i]) and (best is None or bottom[i] < bottom[best]):
            best = i
    if best is None:
        return None
    lead = max((bottom[j] for j in ready if j != best), default=-1.0) - bottom[best]
    if large[best]:
        return best if lead >= _LARGE_LEAD_US else None
    return best if lead >= 0.0 else None


# -- run time -----------------------------------------------------------------------------

class _Job:
    """One kernel running in the background; `join` returns its value (or raises)."""

    __slots__ = ("kernel", "args", "result", "error", "started", "done", "cond", "offered",
                 "item")

    def __init__(self, kernel, args, item):
        self.kernel = kernel
        self.args = args
        self.item = item
        self.result = None
        self.error = None
        self.started = False
        self.done = False
        self.cond = threading.Condition(threading.Lock())
        self.offered = None

    def run(self) -> None:
        """On the pool worker: the kernel, its products' chunks offered to the joiner (who
        runs the whole kernel itself when the worker has not started it by then)."""
        with self.cond:
            if self.started:
                return
            self.started = True
        intra_op.set_background(self)
        try:
            self.result = self.kernel(*self.args)
        except BaseException as err:  # noqa: BLE001 - raised by `join` in the driver
            self.error = err
        finally:
            intra_op.set_background(None)
            self.args = None
            thread_budget.concurrent_kernel_finished()
            with self.cond:
                self.done = True
                self.offered = None
                self.cond.notify_all()

    def offer(self, work) -> bool:
        """`intra_op`'s `submit`: `work()` claims chunks of the running product."""
        with self.cond:
            if self.done:
                return False
            self.offered = work
            self.cond.notify_all()
        return True

    def wait(self) -> None:
        """Waits for the kernel, running the chunks of its products nobody has claimed (or
        the whole kernel, when no worker has started it: one that waits for a time slice
        then costs nothing)."""
        cond = self.cond
        with cond:
            claimed = not self.started
            self.started = True
        if claimed:
            thread_budget.concurrent_kernel_finished()
            try:
                self.result = self.kernel(*self.args)
            except Exception as err:  # noqa: BLE001 - raised by `join`, as the worker's
                self.error = err
            finally:
                self.args = None
                self.done = True
            return
        while True:
            with cond:
                while not self.done and self.offered is None:
                    cond.wait()
                if self.done:
                    return
                work, self.offered = self.offered, None
            work()


class _Finished:
    """A background kernel that ran inline (too small, or no idle worker)."""

    __slots__ = ("result", "item")

    def __init__(self, result, item):
        self.result = result
        self.item = item


class StepOverlap:
    """The background kernels of one step (see the module docstring)."""

    __slots__ = ("pool", "jobs")

    def __init__(self, pool):
        self.pool = pool
        self.jobs: list = []

    def spawn(self, kernel, worth, item, *args):
        """Starts `kernel(*args)` in the background, or runs it now (small, or no worker)."""
        pool = self.pool
        # NOTE: only while BLAS has several threads (free cores): under load the budget
        # already splits large kernels over the cores (`intra_op`), and a background kernel
        # would wait for a time slice.
        if pool is None or thread_budget.intra_op_threads() < 2 or \
                not worth(args):
            return _Finished(kernel(*args), item)
        job = _Job(kernel, args, item)
        thread_budget.concurrent_kernel_started()
        if not pool.try_run(job.run, counted=False):
            thread_budget.concurrent_kernel_finished()
            return _Finished(kernel(*args), item)
        self.jobs.append(job)
        return job

    def join(self, job):
        """The value of a spawned kernel (its error is raised here, in program order)."""
        if type(job) is _Finished:
            return job.result
        job.wait()
        self.jobs.remove(job)
        if job.error is not None:
            raise job.error
        return job.result

    def settle(self) -> list:
        """Waits for every kernel still in the background (a failed step); returns their
        `(item, error)` failures."""
        failures = []
        for job in self.jobs:
            job.wait()
            if job.error is not None:
                failures.append((job.item, job.error))
        self.jobs = []
        return failures


def first_in_order(candidates, position):
    """The `(node, error)` of the earliest node in program order (`position[id(node)]`)."""
    return min(candidates, key=lambda pair: position.get(id(pair[0]), math.inf)
               if pair[0] is not None else math.inf)
