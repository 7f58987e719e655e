"""Building one function once per replica, with `merge_call` points where all replicas meet.

Each replica's function runs in its own thread, but only one thread runs at a time: the
caller's thread resumes replica 0 until it finishes or reaches `merge_call`, then replica 1,
and so on. When every replica waits in `merge_call`, the merge function runs once in the
caller's thread (cross-replica context) with the replicas' arguments grouped as `PerReplica`,
and each replica resumes with its part of the result. Graph construction stays sequential and
deterministic (op names do not depend on thread timing).

The graph's name scope is shared by threads, so each switch saves the running thread's name
scope and control-flow context and restores the next one's; device, colocation and
control-dependency stacks are per thread (`Graph.switch_to_thread_local`), each replica starting
from the caller's.
"""

from __future__ import annotations

import re
import threading

from tensorflux.distribute import values as values_lib
from tensorflux.framework import graph as graph_mod
from tensorflux.ops.state import variable_scope as vs
from tensorflux.ops.state import variables as variables_lib

__all__ = ["call_for_each_replica"]


class _GraphState:
    """The graph state threads share and must not see each other's changes of."""

    __slots__ = ("name_stack", "control_flow_context")

    def __init__(self, graph):
        self.name_stack = graph._name_stack
        self.control_flow_context = graph._control_flow_context

    def restore(self, graph) -> None:
        graph._name_stack = self.name_stack
        graph._control_flow_context = self.control_flow_context


_UNIQUIFIED = re.compile(r"_\d+/")
_UNIQUIFIED_AT_END = re.compile(r"_\d+$")


def _canonical_name(name) -> str:
    """'dense_1/kernel' -> 'dense/kernel': the name a variable was asked for, whatever suffix
    made it unique."""
    if name is None:
        return "Variable"
    name = _UNIQUIFIED.sub("/", str(name))
    return _UNIQUIFIED_AT_END.sub("", name)


class _SharedVariables:
    """Replica 0 creates the variables (`tf.Variable` inside the function); replica i gets the
    one replica 0 created under the same requested name, in creation order, as TF's shared
    variable creator does (`get_variable` shares through the reused variable scope)."""

    def __init__(self):
        self.created: dict = {}

    def creator(self, replica_id: int):
        taken: dict = {}

        def create(next_creator, **kwargs):
            name = _canonical_name(kwargs.get("name"))
            if replica_id == 0:
                variable = next_creator(**kwargs)
                self.created.setdefault(name, []).append(variable)
                return variable
            index = taken.get(name, 0)
            found = self.created.get(name, [])
            if index >= len(found):
                raise RuntimeError(f"Tried to create variable {name!r} on replica "
                                   f"{replica_id} that replica 0 did not create: the function "
                                   f"must create the same variables on every replica.")
            taken[name] = index + 1
            return found[index]

        return create


class _ReplicaThread(threading.Thread):
    def __init__(self, strategy, replica_id, device, fn, args, kwargs, caller, shared):
        super().__init__(name=f"replica_{replica_id}", daemon=True)
        self.strategy = strategy
        self.replica_id = replica_id
        self.device = device
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.graph = caller["graph"]
        self.caller = caller
        self.shared = shared
        self.should_run = threading.Event()
        self.has_paused = threading.Event()
        self.done = False
        self.result = None
        self.error = None
        self.merge_fn = None
        self.merge_args = ()
        self.merge_kwargs = {}
        self.merge_result = None
        self.saved_state = None
        self.merge_var_scope = None

    def run(self):
        self.should_run.wait()
        self.should_run.clear()
        graph = self.graph
        try:
            from tensorflux.distribute.mirrored_strategy import MirroredReplicaContext  # cycle

            graph._device_stack = list(self.caller["device_stack"])
            graph._colocation_stack = list(self.caller["colocation_stack"])
            graph._control_dependencies_stack = list(self.caller["control_stack"])
            graph._variable_creator_stack = list(self.caller["creator_stack"])
            self.caller["state"].restore(graph)
            outer = self.caller["state"].name_stack
            scope = outer + "/" if outer else ""
            if self.replica_id > 0:  # absolute, never made unique: "replica_1/..."
                scope += f"replica_{self.replica_id}/"
            with graph.as_default(), \
                    MirroredReplicaContext(self.strategy, self.replica_id, self), \
                    graph.device(self.device), \
                    vs.variable_scope(self.caller["var_scope"], auxiliary_name_scope=False,
                                      reuse=True if self.replica_id > 0 else None), \
                    graph.name_scope(scope or None), \
                    variables_lib.variable_creator_scope(self.shared.creator(self.replica_id)):
                self.result = self.fn(*self.args, **self.kwargs)
        except BaseException as error:  # handed to the caller's thread
            self.error = error
        finally:
            self.done = True
            self.has_paused.set()

    def merge(self, merge_fn, args, kwargs):
        """Called in this replica's thread: pause until the merge function has run."""
        self.merge_fn, self.merge_args, self.merge_kwargs = merge_fn, args, kwargs
        self.saved_state = _GraphState(self.graph)
        self.merge_var_scope = vs.get_variable_scope()
        self.has_paused.set()
        self.should_run.wait()
        self.should_run.clear()
        self.saved_state.restore(self.graph)
        if isinstance(self.merge_result, BaseException):
            raise self.merge_result
        return self.merge_result


def call_for_each_replica(strategy, devices: tuple, fn, args: tuple, kwargs: dict):
    """Builds `fn` once per replica (see the module docstring); returns the results regrouped:
    `PerReplica` leaves where replicas differ."""
    graph = graph_mod.get_default_graph()
    graph.switch_to_thread_local()
    caller = {"graph": graph, "state": _GraphState(graph),
              "device_stack": list(graph._device_stack),
              "colocation_stack": list(graph._colocation_stack),
              "control_stack": list(graph._control_dependencies_stack),
              "creator_stack": list(graph._variable_creator_stack),
              "var_scope": vs.get_variable_scope()}
    shared = _SharedVariables()
    threads = [_ReplicaThread(strategy, i, device, fn,
                              values_lib.select_replica(i, args),
                              values_lib.select_replica(i, kwargs), caller, shared)
               for i, device in enumerate(devices)]
    for thread in threads:
        thread.start()
    try:
        _drive(strategy, graph, caller, threads)
    finally:
        caller["state"].restore(graph)
        for thread in threads:
            if not thread.done:  # an error elsewhere: let the thread finish with it
                thread.merge_result = RuntimeError("another replica failed")
                thread.should_run.set()
            thread.join()
    for thread in threads:
        if thread.error is not None:
            raise thread.error
    return values_lib.regroup([t.result for t in threads])


def _drive(strategy, graph, caller, threads) -> None:
    from tensorflux.distribute import distribute_lib  # cycle: distribute_lib uses us

    while True:
        for thread in threads:
            thread.should_run.set()
            thread.has_paused.wait()
            thread.has_paused.clear()
            caller["state"].restore(graph)
            if thread.error is not None:
                raise thread.error
        finished = [t.done for t in threads]
        if all(finished):
            return
        if any(finished):
            raise RuntimeError("Some replicas made a different number of "
                               "replica_context().merge_call() calls.")
        merge_fn = threads[0].merge_fn  # each replica passes its own closure: the first runs
        args = values_lib.regroup([t.merge_args for t in threads])
        kwargs = values_lib.regroup([t.merge_kwargs for t in threads])
        first = threads[0]
        first.saved_state.restore(graph)
        try:
            with distribute_lib._entered(distribute_lib._Mode(strategy, cross_replica=strategy)), \
                    vs.variable_scope(first.merge_var_scope, auxiliary_name_scope=False):
                result = merge_fn(strategy, *args, **kwargs)
        finally:
            caller["state"].restore(graph)
        for thread in threads:
            thread.merge_result = values_lib.select_replica(thread.replica_id, result)
