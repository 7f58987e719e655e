"""The step core alone: hand-built plans driven by "node finished" events, no threads, no kernels.

Each test builds runtime Nodes by hand, prepares a Plan, and plays the driver: it decides every
node's outputs itself and checks which nodes the core declares ready, in which frame and
iteration, and that the bookkeeping drains to zero.
"""

import pytest

import tensorflux  # noqa: F401 - registers the ops whose definitions the plans use
from tensorflux.framework import dtypes
from tensorflux.runtime.graph_ir import Node
from tensorflux.runtime.plan import Plan
from tensorflux.runtime.step import DEAD
from tensorflux.runtime.step_core import StepCore

F32 = dtypes.float32


class _Device:
    device_type = "CPU"
    name = "/job:localhost/replica:0/task:0/device:CPU:0"
    resource_mgr = None
    incarnation = 1


def _node(name, op, inputs=(), control=(), n_out=1, dtype=F32, **attrs):
    attrs.setdefault("T", dtype)
    return Node(name, op, attrs, list(inputs), list(control), output_dtypes=[dtype] * n_out)


def _arg(name, dtype=F32):
    return Node(name, "_Arg", {"T": dtype, "index": 0}, [], [], output_dtypes=[dtype])


def _plan(nodes, fetches):
    return Plan(nodes, _Device(), fetches)


def _names(ready):
    return sorted(item.node.name for item, _, _ in ready)


def _find(ready, name):
    for entry in ready:
        if entry[0].node.name == name:
            return entry
    raise AssertionError(f"{name} is not ready; ready: {_names(ready)}")


def _cond_plan():
    x, p = _arg("x"), _arg("p", dtypes.bool_)
    switch = _node("switch", "Switch", [(x, 0), (p, 0)], n_out=2)
    a = _node("a", "Identity", [(switch, 0)])
    b = _node("b", "Identity", [(switch, 1)])
    merge = Node("merge", "Merge", {"T": F32, "N": 2}, [(a, 0), (b, 0)], [],
                 output_dtypes=[F32, dtypes.int32])
    after = _node("after", "Identity", [(a, 0)])
    nodes = [x, p, switch, a, b, merge, after]
    return _plan(nodes, [(merge, 0), (after, 0)])


def test_start_schedules_the_sources():
    core = StepCore(_cond_plan())
    assert _names(core.start()) == ["p", "x"]
    assert core.outstanding == 2 and not core.done


def test_dead_branch_propagates_and_merge_takes_the_live_input():
    core = StepCore(_cond_plan())
    ready = core.start()
    assert core.node_finished(*_find(ready, "x"), (1.5,)) == []
    switch = core.node_finished(*_find(ready, "p"), (True,))
    assert _names(switch) == ["switch"]
    # A true predicate: output 0 (false branch) dead, output 1 live.
    branches = core.node_finished(*switch[0], (DEAD, 1.5))
    assert _names(branches) == ["a", "b"]
    a, b = _find(branches, "a"), _find(branches, "b")
    assert core.has_dead_input(*a) and not core.has_dead_input(*b)
    # The dead `a` finishes dead: its consumer `after` becomes ready dead; Merge waits.
    after = core.node_finished(*a, (DEAD,), is_dead=True)
    assert _names(after) == ["after"] and core.has_dead_input(*after[0])
    merge = core.node_finished(*b, (1.5,))
    assert _names(merge) == ["merge"]
    assert core.inputs(*merge[0]) == [None, 1.5]  # a Merge keeps no slot for dead inputs
    core.node_finished(*merge[0], (1.5, 1))
    core.node_finished(*after[0], (DEAD,), is_dead=True)
    assert core.done and core.results[0] == 1.5


def test_merge_with_every_input_dead_is_ready_dead():
    x, p = _arg("x"), _arg("p", dtypes.bool_)
    switch = _node("switch", "Switch", [(x, 0), (p, 0)], n_out=2)
    a = _node("a", "Identity", [(switch, 0)])
    b = _node("b", "Identity", [(switch, 0)])
    merge = Node("merge", "Merge", {"T": F32, "N": 2}, [(a, 0), (b, 0)], [],
                 output_dtypes=[F32, dtypes.int32])
    core = StepCore(_plan([x, p, switch, a, b, merge], [(merge, 0)]))
    ready = core.start()
    core.node_finished(*_find(ready, "x"), (2.0,))
    switch_ready = core.node_finished(*_find(ready, "p"), (True,))
    branches = core.node_finished(*switch_ready[0], (DEAD, 2.0))
    assert core.node_finished(*_find(branches, "a"), (DEAD,), is_dead=True) == []
    merge_ready = core.node_finished(*_find(branches, "b"), (DEAD,), is_dead=True)
    assert _names(merge_ready) == ["merge"]
    assert core.inputs(*merge_ready[0]) == [None, None]
    core.node_finished(*merge_ready[0], (DEAD, DEAD), is_dead=True)
    assert core.done and core.results[0] is DEAD  # the session reports a dead fetch


def _loop_plan(parallel_iterations=10, side_node=False):
    """x -> Enter -> Merge <- NextIteration <- body <- Switch:1;  Switch:0 -> Exit -> out."""
    x = _arg("x")
    enter = _node("enter", "Enter", [(x, 0)], frame_name="loop", is_constant=False,
                  parallel_iterations=parallel_iterations)
    merge = Node("merge", "Merge", {"T": F32, "N": 2}, [(enter, 0)], [],
                 output_dtypes=[F32, dtypes.int32])
    cond = _node("cond", "Identity", [(merge, 0)], dtype=dtypes.bool_)
    loop_cond = Node("loop_cond", "LoopCond", {}, [(cond, 0)], [], output_dtypes=[dtypes.bool_])
    switch = _node("switch", "Switch", [(merge, 0), (loop_cond, 0)], n_out=2)
    exit_ = _node("exit", "Exit", [(switch, 0)])
    body = _node("body", "Identity", [(switch, 1)])
    next_it = _node("next", "NextIteration", [(body, 0)])
    merge.inputs.append((next_it, 0))
    nodes = [x, enter, merge, cond, loop_cond, switch, exit_, body, next_it]
    if side_node:
        nodes.append(_node("side", "Identity", [(switch, 1)]))
    out = _node("out", "Identity", [(exit_, 0)])
    nodes.append(out)
    return _plan(nodes, [(out, 0)])


def _run_loop(core, trips):
    """Drives the loop for `trips` iterations; returns the iterations each node ran in."""
    seen = {}
    ready = list(core.start())
    counter = {}
    while ready:
        item, frame, it = ready.pop(0)
        name = item.node.name
        seen.setdefault(name, []).append(it)
        dead = core.has_dead_input(item, frame, it) and item.node.op != "Merge"
        if name == "x":
            outputs = (0.0,)
        elif name == "merge":
            live = [v for v in core.inputs(item, frame, it) if v is not None and v is not DEAD]
            outputs, dead = ((live[0], 0), False) if live else ((DEAD, DEAD), True)
        elif name == "cond":
            counter[it] = it < trips
            outputs = (counter[it],)
        elif name == "switch":
            value, pred = core.inputs(item, frame, it)
            outputs = (DEAD, value + 1.0) if pred else (value, DEAD)
        else:
            outputs = tuple(core.inputs(item, frame, it)[:1]) or (0.0,)
        if dead:
            outputs = (DEAD,) * item.n_outputs
        ready.extend(core.node_finished(item, frame, it, outputs, dead))
    return seen


def test_while_loop_frames_and_iterations():
    core = StepCore(_loop_plan())
    seen = _run_loop(core, trips=3)
    assert seen["merge"] == [0, 1, 2, 3]
    assert seen["body"] == [0, 1, 2, 3]  # the last one runs dead (Switch's live side is Exit)
    assert seen["exit"] == [0, 1, 2, 3]
    assert seen["out"] == [0]
    assert core.results[0] == 3.0
    assert core.done and core.frames == {}  # the loop frame was deleted when it finished


def test_parallel_iterations_holds_the_next_iteration_back():
    core = StepCore(_loop_plan(parallel_iterations=1, side_node=True))
    ready = list(core.start())

    def finish(name, outputs, dead=False):
        entry = _find(ready, name)
        ready.remove(entry)
        ready.extend(core.node_finished(*entry, outputs, dead))
        return entry

    finish("x", (0.0,))
    finish("enter", (0.0,))
    finish("merge", (0.0, 0))
    finish("cond", (True,))
    finish("loop_cond", (True,))
    finish("switch", (DEAD, 1.0))
    finish("exit", (DEAD,), dead=True)
    finish("body", (1.0,))
    finish("next", (1.0,))
    # Iteration 0 still runs `side`: with parallel_iterations=1 iteration 1 must wait.
    assert _names(ready) == ["side"]
    (frame,) = core.frames.values()
    assert frame.iteration_count == 0 and frame.next_iter_roots
    finish("side", (1.0,))
    merge = _find(ready, "merge")
    assert merge[2] == 1 and frame.iteration_count == 1
    assert core.inputs(*merge)[1] == 1.0


def test_parallel_iterations_lets_iterations_overlap():
    core = StepCore(_loop_plan(parallel_iterations=2, side_node=True))
    ready = list(core.start())
    for name, outputs in [("x", (0.0,)), ("enter", (0.0,)), ("merge", (0.0, 0)),
                          ("cond", (True,)), ("loop_cond", (True,)), ("switch", (DEAD, 1.0))]:
        entry = _find(ready, name)
        ready.remove(entry)
        ready.extend(core.node_finished(*entry, outputs))
    for name, outputs, dead in [("exit", (DEAD,), True), ("body", (1.0,), False),
                                ("next", (1.0,), False)]:
        entry = _find(ready, name)
        ready.remove(entry)
        ready.extend(core.node_finished(*entry, outputs, dead))
    # Iteration 1 starts although iteration 0's `side` is still pending.
    assert sorted((item.node.name, it) for item, _, it in ready) == [("merge", 1), ("side", 0)]


def test_error_drain_forgets_ready_nodes_and_counts_failures():
    core = StepCore(_cond_plan())
    ready = core.start()
    x, p = _find(ready, "x"), _find(ready, "p")
    core.ready.clear()
    core.ready.extend([p])
    core.node_failed(*x)  # x's kernel failed: no outputs, nothing downstream becomes ready
    assert core.outstanding == 1
    core.drop_ready()  # the step aborts: p never runs
    assert core.done and not core.ready


def test_invariants_are_replayed_into_every_iteration():
    x, k = _arg("x"), _arg("k")
    enter = _node("enter", "Enter", [(x, 0)], frame_name="loop", is_constant=False,
                  parallel_iterations=10)
    const_enter = _node("kenter", "Enter", [(k, 0)], frame_name="loop", is_constant=True,
                        parallel_iterations=10)
    merge = Node("merge", "Merge", {"T": F32, "N": 2}, [(enter, 0)], [],
                 output_dtypes=[F32, dtypes.int32])
    cond = _node("cond", "Identity", [(merge, 0)], dtype=dtypes.bool_)
    loop_cond = Node("loop_cond", "LoopCond", {}, [(cond, 0)], [], output_dtypes=[dtypes.bool_])
    switch = _node("switch", "Switch", [(merge, 0), (loop_cond, 0)], n_out=2)
    exit_ = _node("exit", "Exit", [(switch, 0)])
    body = Node("body", "AddV2", {"T": F32}, [(switch, 1), (const_enter, 0)], [],
                output_dtypes=[F32])
    next_it = _node("next", "NextIteration", [(body, 0)])
    merge.inputs.append((next_it, 0))
    plan = _plan([x, k, enter, const_enter, merge, cond, loop_cond, switch, exit_, body,
                  next_it], [(exit_, 0)])
    core = StepCore(plan)
    ready = list(core.start())
    bodies = []
    while ready:
        item, frame, it = ready.pop(0)
        name = item.node.name
        values = core.inputs(item, frame, it)
        dead = core.has_dead_input(item, frame, it) and name != "merge"
        if name in ("x", "k"):
            outputs = (0.0,) if name == "x" else (10.0,)
        elif name == "merge":
            live = [v for v in values if v is not None and v is not DEAD]
            outputs = (live[0], 0)
        elif name == "cond":
            outputs = (values[0] < 30.0,)
        elif name == "switch":
            outputs = (DEAD, values[0]) if values[1] else (values[0], DEAD)
        elif name == "body" and not dead:
            bodies.append((it, values[1]))
            outputs = (values[0] + values[1],)
        else:
            outputs = (values[0],)
        if dead:
            outputs = (DEAD,) * item.n_outputs
        ready.extend(core.node_finished(item, frame, it, outputs, dead))
    assert bodies == [(0, 10.0), (1, 10.0), (2, 10.0)]
    assert core.results[0] == 30.0 and core.done


@pytest.mark.parametrize("trips", [0, 1, 7])
def test_loop_trip_counts(trips):
    core = StepCore(_loop_plan())
    seen = _run_loop(core, trips)
    assert core.results[0] == float(trips)
    assert len(seen["merge"]) == trips + 1 and core.done
