"""The step core: a step's pure bookkeeping of pending counts, dead values, frames and iterations.

Contract: `StepCore` holds no threads, kernels or clocks. It is fed "node finished (outputs,
dead)" events and answers with the nodes that became ready; the executor's driver (or a test)
decides how each ready node runs. Its rules are the paper's control flow:

- an op with a dead input does not run: it finishes dead, making its outputs dead;
- a `Merge` is ready on its first live input, or dead once every input is dead;
- `Enter` moves a value into the child frame it names (one frame instance per loop entry and
  parent iteration), `Exit` back to the parent, `NextIteration` into the next iteration;
- at most `parallel_iterations` iterations of a frame are alive; a `NextIteration` that would
  open one more waits until the oldest iteration is done;
- loop invariants (`Enter` with `is_constant`) are replayed into every new iteration;
- the dead `Exit`s of a frame's last iteration propagate when the frame is deleted.

After an error the driver calls `drop_ready()`; the step is over when `outstanding == 0`.
"""

from __future__ import annotations

from collections import deque

from tensorflux.runtime.plan import ENTER, EXIT, NEXT, Plan
from tensorflux.runtime.step import DEAD, frame_id_of


class _Iteration:
    """Per-iteration state; its kernel context is made only if a kernel asks for it."""

    __slots__ = ("pending", "dead", "inputs", "outstanding_ops", "outstanding_frames", "_ctx",
                 "_parent_ctx", "_frame_id", "_number")

    def __init__(self, template, ctx, first: bool = False, frame_id: int = 0, number: int = 0):
        self.pending = list(template.pending_init)
        self.dead = list(template.dead_first) if first else [0] * len(template.items)
        self.inputs = template.inputs_init.copy()
        self.outstanding_ops = 0
        self.outstanding_frames = 0
        self._ctx = ctx if not frame_id else None
        self._parent_ctx = ctx
        self._frame_id = frame_id
        self._number = number

    @property
    def ctx(self):
        ctx = self._ctx
        if ctx is None:
            ctx = self._ctx = self._parent_ctx.child(self._frame_id, self._number)
        return ctx


class _Frame:
    __slots__ = ("template", "path", "parent", "parent_iter", "iterations", "iteration_count",
                 "num_outstanding_iterations", "max_parallel", "next_iter_roots", "inv_values",
                 "dead_exits", "num_pending_inputs", "frame_id", "key")

    def __init__(self, template, path, parent, parent_iter, key):
        self.template = template
        self.path = path
        self.parent = parent
        self.parent_iter = parent_iter
        self.iterations: dict = {}
        self.iteration_count = 0
        self.num_outstanding_iterations = 1
        self.max_parallel = max(1, template.parallel_iterations)
        self.next_iter_roots: list = []
        self.inv_values: list = []
        self.dead_exits: list = []
        self.num_pending_inputs = template.num_enters
        self.frame_id = frame_id_of(path) if path else 0
        self.key = key


class StepCore:
    """One step's bookkeeping for one partition's plan (see the module docstring).

    `ready` holds `(item, frame, iteration)` triples; `outstanding` counts scheduled nodes not
    yet finished; `results` the fetched values by fetch position.
    """

    def __init__(self, plan: Plan, ctx=None):
        self.plan = plan
        self.ctx = ctx
        self.ready: deque = deque()
        self.outstanding = 0
        self.results = [None] * len(plan.fetches)
        self.frames: dict = {}
        root = _Frame(plan.root, "", None, 0, None)
        root.num_pending_inputs = 0
        root.iterations[0] = _Iteration(plan.root, ctx)
        self.root = root

    # -- the event interface ---------------------------------------------------------------

    def start(self) -> list:
        """Schedules the plan's initially ready nodes; returns them (and keeps them in `ready`)."""
        for item in self.plan.root_ready:
            self._schedule(item, self.root, 0)
        return list(self.ready)

    def node_finished(self, item, frame, it, outputs, is_dead: bool = False) -> list:
        """Records that `item` finished with `outputs`; returns the nodes that became ready.

        The returned triples are also appended to `ready` (the driver pops from there).
        """
        before = len(self.ready)
        self._finish(item, frame, it, tuple(outputs), is_dead)
        return list(self.ready)[before:]

    def node_failed(self, item, frame, it) -> None:
        """Records that `item` ended without outputs (its step is failing)."""
        self._node_done(item, frame, it)

    def drop_ready(self) -> None:
        """Error drain: forgets every ready node without running it."""
        while self.ready:
            item, frame, it = self.ready.popleft()
            self._node_done(item, frame, it)

    def inputs(self, item, frame, it) -> list:
        """The input values `item` received in that iteration.

        DEAD marks a dead input; a Merge keeps no value for dead inputs (None), nor for inputs
        not yet received.
        """
        base = item.slot_base
        return frame.iterations[it].inputs[base:base + item.n_inputs]

    def has_dead_input(self, item, frame, it) -> bool:
        return frame.iterations[it].dead[item.local] > 0

    @property
    def done(self) -> bool:
        return self.outstanding == 0

    def _schedule(self, item, frame, it) -> None:
        frame.iterations[it].outstanding_ops += 1
        self.outstanding += 1
        self.ready.append((item, frame, it))

    # -- propagation -----------------------------------------------------------------------

    def _finish(self, item, frame, it, outputs, is_dead) -> None:
        kind = item.kind
        # An Exit's value lives in the parent frame: fetchable when that is the root.
        if item.fetch_slots and (frame.parent if kind == EXIT else frame) is self.root \
                and not (kind == EXIT and is_dead):
            for idx, position in item.fetch_slots:
                self.results[position] = outputs[idx]
        if kind == ENTER:
            child = self._child_frame(item, frame, it)
            if item.is_constant:
                child.inv_values.append((item, outputs, is_dead))
                for k in range(child.iteration_count + 1):
                    if k in child.iterations:
                        self._activate(item, child, k, outputs, is_dead)
            else:
                self._activate(item, child, 0, outputs, is_dead)
            child.num_pending_inputs -= 1
            if child.num_pending_inputs == 0 and 0 in child.iterations and \
                    child.iterations[0].outstanding_ops == 0:
                self._cleanup(child, 0)
        elif kind == EXIT:
            if is_dead:
                if it == frame.iteration_count:
                    frame.dead_exits.append(item)
            else:
                self._activate(item, frame.parent, frame.parent_iter, outputs, False)
        elif kind == NEXT:
            if not is_dead:
                if it == frame.iteration_count and \
                        frame.num_outstanding_iterations >= frame.max_parallel:
                    frame.next_iter_roots.append((item, outputs))
                else:
                    if it == frame.iteration_count:
                        self._increment_iteration(frame)
                    self._activate(item, frame, it + 1, outputs, False)
        else:
            self._activate(item, frame, it, outputs, is_dead)
        self._node_done(item, frame, it)

    def _activate(self, item, frame, it, outputs, is_dead) -> None:
        iteration = frame.iterations[it]
        pending = iteration.pending
        dead = iteration.dead
        slots = iteration.inputs
        push = self.ready.append
        scheduled = 0
        for index, dst, slot, local, is_merge in item.flat_edges:
            value = outputs[index]
            if is_merge:
                if value is DEAD:
                    dead[local] += 1
                    fire = pending[local] == 1 and dead[local] == dst.n_data
                else:
                    count = pending[local]
                    if count & 1:
                        slots[slot] = value
                        pending[local] = count - 1
                    fire = count == 1
            else:
                slots[slot] = value
                if value is DEAD:
                    dead[local] += 1
                count = pending[local] - 1
                pending[local] = count
                fire = count == 0
            if fire:
                scheduled += 1
                push((dst, frame, it))
        for dst, local, is_merge in item.flat_controls:
            if is_merge:
                count = pending[local] - 2
                pending[local] = count
                fire = count == 0 or (count == 1 and dead[local] == dst.n_data)
            else:
                if is_dead:
                    dead[local] += 1
                count = pending[local] - 1
                pending[local] = count
                fire = count == 0
            if fire:
                scheduled += 1
                push((dst, frame, it))
        # Folded Consts hanging off this item by a control edge: dead when it is dead.
        for value, dst, slot, local in item.flat_consts:
            if is_dead:
                slots[slot] = DEAD
                dead[local] += 1
            else:
                slots[slot] = value
            count = pending[local] - 1
            pending[local] = count
            if count == 0:
                scheduled += 1
                push((dst, frame, it))
        if scheduled:
            iteration.outstanding_ops += scheduled
            self.outstanding += scheduled

    def _node_done(self, item, frame, it) -> None:
        self.outstanding -= 1
        iteration = frame.iterations[it]
        iteration.outstanding_ops -= 1
        if iteration.outstanding_ops == 0 and frame is not self.root:
            self._cleanup(frame, it)

    # -- frames ----------------------------------------------------------------------------

    def _child_frame(self, enter_item, frame, it) -> _Frame:
        key = (enter_item.frame_name, id(frame), it)
        child = self.frames.get(key)
        if child is None:
            template = self.plan.frames[enter_item.frame_name]
            path = f"{frame.path};{it};{enter_item.frame_name}"
            child = _Frame(template, path, frame, it, key)
            child.max_parallel = max(1, enter_item.parallel_iterations)
            child.iterations[0] = _Iteration(template, self.ctx, first=True,
                                             frame_id=frame_id_of(path), number=0)
            self.frames[key] = child
            frame.iterations[it].outstanding_frames += 1
        return child

    def _increment_iteration(self, frame) -> None:
        frame.iteration_count += 1
        n = frame.iteration_count
        frame.iterations[n] = _Iteration(frame.template, self.ctx, frame_id=frame.frame_id,
                                         number=n)
        frame.num_outstanding_iterations += 1
        frame.dead_exits = []
        roots, frame.next_iter_roots = frame.next_iter_roots, []
        for item, outputs in roots:
            self._activate(item, frame, n, outputs, False)
        for item, outputs, is_dead in frame.inv_values:
            self._activate(item, frame, n, outputs, is_dead)

    def _iteration_done(self, frame, it) -> bool:
        iteration = frame.iterations.get(it)
        if iteration is None or iteration.outstanding_ops or iteration.outstanding_frames:
            return False
        if it == 0:
            return frame.num_pending_inputs == 0
        return (it - 1) not in frame.iterations

    def _cleanup(self, frame, it) -> None:
        current = it
        while current <= frame.iteration_count and self._iteration_done(frame, current):
            del frame.iterations[current]
            frame.num_outstanding_iterations -= 1
            current += 1
            if frame.next_iter_roots:
                self._increment_iteration(frame)
        if frame.num_pending_inputs == 0 and frame.num_outstanding_iterations == 0:
            self._delete_frame(frame)

    def _delete_frame(self, frame) -> None:
        parent = frame.parent
        parent_iter = frame.parent_iter
        self.frames.pop(frame.key, None)
        parent_iteration = parent.iterations[parent_iter]
        for item in frame.dead_exits:
            self._activate(item, parent, parent_iter, (DEAD,) * item.n_outputs, True)
        parent_iteration.outstanding_frames -= 1
        if parent is not self.root and parent_iteration.outstanding_ops == 0:
            self._cleanup(parent, parent_iter)
