"""`Session.partial_run_setup` / `Session.partial_run`: one step run in pieces, feeding some
inputs and fetching some outputs at a time, each op of the step run at most once.

Each piece runs the ops its fetches need that earlier pieces did not run. The values earlier
pieces computed and later ones need (outputs of run ops consumed by ops still to run, and
declared fetches not yet asked for) are captured and fed to the later pieces, which cuts the
graph there, so no op runs twice. An op still to run that depends by a control edge alone on an
op an earlier piece ran cannot be cut that way: that piece raises UnimplementedError rather
than run the earlier op again.
"""

from __future__ import annotations

import itertools
import threading

from tensorflux.framework import errors
from tensorflux.framework.tensor import Operation, Tensor
from tensorflux.runtime import fetch as fetch_mod

__all__ = ["PartialRuns"]


class _Run:
    def __init__(self, feeds, fetches, closure):
        self.feeds = feeds          # tensors the setup allows feeding
        self.fetches = fetches      # elements the setup allows fetching
        self.closure = closure      # every op the declared fetches depend on
        self.fed = set()
        self.fetched = set()
        self.known = {}             # tensor -> value (fed or captured)
        self.ran = set()            # ops already run


def _ancestors(elements) -> set:
    ops, stack = set(), [e.op if isinstance(e, Tensor) else e for e in elements]
    while stack:
        op = stack.pop()
        if op in ops:
            continue
        ops.add(op)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return ops


class PartialRuns:
    """The partial runs of one session, by handle."""

    def __init__(self, session):
        self._session = session
        self._runs = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()

    def setup(self, fetches, feeds=None) -> str:
        """Declares what later `run` calls may fetch and feed; returns the handle."""
        graph = self._session.graph
        elements = fetch_mod.FetchHandler(graph, fetches).elements
        feed_tensors = []
        for feed in feeds or []:
            feed_tensors.extend(self._session._feed_tensor(f) for f in _flat(feed))
        run = _Run(set(feed_tensors), set(elements), _ancestors(elements))
        with self._lock:
            handle = f"tfx_partial_run;{next(self._ids)}"
            self._runs[handle] = run
        return handle

    def run(self, handle, fetches, feed_dict=None):
        """Runs the piece of the `handle` step that computes `fetches`."""
        run = self._runs.get(handle)
        if run is None:
            raise errors.InvalidArgumentError(
                None, None, f"Partial run handle {handle!r} is unknown: call "
                "partial_run_setup first (handles end with their session).")
        graph = self._session.graph
        handler = fetch_mod.FetchHandler(graph, fetches)
        feed_tensors, feed_values = (self._session._convert_feeds(feed_dict) if feed_dict
                                     else ((), []))
        for tensor in feed_tensors:
            if tensor not in run.feeds:
                raise errors.InvalidArgumentError(
                    None, tensor.op, f"Input to feed {tensor.name} is not specified in "
                    "partial_run_setup.")
            if tensor in run.fed:
                raise errors.InvalidArgumentError(
                    None, tensor.op, f"Input {tensor.name} has already been fed.")
        for element in handler.elements:
            if element not in run.fetches:
                raise errors.InvalidArgumentError(
                    None, None, f"Fetch {element.name} was not specified in "
                    "partial_run_setup.")
            if element in run.fetched:
                raise errors.InvalidArgumentError(
                    None, None, f"Fetch {element.name} has already been fetched.")
        known = dict(run.known)
        known.update(zip(feed_tensors, feed_values))
        to_run = self._ops_to_run(run, handler.elements, known)
        capture = self._captures(run, to_run, known, handler.elements)
        wanted = [e for e in handler.elements if isinstance(e, Tensor)]
        targets = [e for e in handler.elements if isinstance(e, Operation)]
        needed_feeds = {t: v for t, v in known.items() if t.op not in to_run}
        values = self._session.run(wanted + capture + targets, feed_dict=needed_feeds)
        got = dict(zip(wanted + capture, values))
        run.known.update(zip(feed_tensors, feed_values))
        run.known.update(got)
        run.fed.update(feed_tensors)
        run.fetched.update(handler.elements)
        run.ran.update(to_run)
        return handler.build([got.get(e) if isinstance(e, Tensor) else None
                              for e in handler.elements])

    @staticmethod
    def _ops_to_run(run, elements, known) -> set:
        ops, stack = set(), []
        for element in elements:
            if isinstance(element, Tensor):
                if element not in known:
                    stack.append((element.op, False))
            else:
                stack.append((element, True))
        while stack:
            op, by_control = stack.pop()
            if op in ops:
                continue
            if op in run.ran:
                if by_control:
                    raise errors.UnimplementedError(
                        None, op, f"partial_run: '{op.name}' ran in an earlier partial run "
                        "and an op to run now depends on it by a control edge only; "
                        "fetch what depends on it in the same partial run.")
                raise errors.InternalError(None, op, f"partial_run: an output of '{op.name}' "
                                           "was not kept from an earlier partial run.")
            ops.add(op)
            stack.extend((t.op, False) for t in op.inputs if t not in known)
            stack.extend((c, True) for c in op.control_inputs)
        return ops

    @staticmethod
    def _captures(run, to_run, known, elements) -> list:
        later = run.closure - run.ran - to_run
        consumed = {t for op in later for t in op.inputs}
        declared = {e for e in run.fetches - run.fetched - set(elements)
                    if isinstance(e, Tensor)}
        graph_fetchable = next(iter(to_run)).graph.is_fetchable if to_run else None
        capture = []
        for op in to_run:
            for tensor in op.outputs:
                if tensor in known or (tensor not in consumed and tensor not in declared):
                    continue
                if tensor in elements or not graph_fetchable(tensor):
                    continue
                capture.append(tensor)
        return sorted(capture, key=lambda t: t.name)


def _flat(feed):
    if isinstance(feed, (list, tuple)):
        for item in feed:
            yield from _flat(item)
    else:
        yield feed
