"""Flattening `Session.run` fetches into graph elements and rebuilding the user's structure.

Fetches may nest lists, tuples, namedtuples and dicts of Tensors, Operations, tensor names and
registered composite types (IndexedSlices, SparseTensor). An Operation fetches None.
"""

from __future__ import annotations

import collections

from tensorflux.framework.composite import EXPANSIONS as _EXPANSIONS
from tensorflux.framework.composite import register_session_run_conversion_functions
from tensorflux.framework.tensor import Operation, Tensor

__all__ = ["FetchHandler", "feed_expansion", "register_session_run_conversion_functions"]


def feed_expansion(key):
    for tensor_type, _, feed_fn, _ in _EXPANSIONS:
        if isinstance(key, tensor_type) and feed_fn is not None:
            return feed_fn
    return None


class FetchHandler:
    """Maps a fetch structure to unique graph elements; rebuilds it from their values."""

    def __init__(self, graph, fetches):
        self.graph = graph
        self.elements: list = []
        self._index: dict = {}
        self._builder = self._map(fetches)

    def _add(self, element) -> int:
        position = self._index.get(element)
        if position is None:
            position = len(self.elements)
            self._index[element] = position
            self.elements.append(element)
        return position

    def _map(self, fetch):
        if fetch is None:
            raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}")
        if isinstance(fetch, (Tensor, Operation)):
            try:
                element = self.graph.as_graph_element(fetch)
            except ValueError as err:  # another graph's (TF's wording)
                kind = "Tensor" if isinstance(fetch, Tensor) else "Operation"
                raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a {kind}. "
                                 f"({err})") from None
            position = self._add(element)
            if isinstance(element, Operation):
                return lambda values: None
            return lambda values: values[position]
        if isinstance(fetch, str):
            try:
                element = self.graph.as_graph_element(fetch)
            except (KeyError, ValueError) as err:
                raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. "
                                 f"({err})") from None
            return self._map(element)
        for tensor_type, fetch_fn, _, _ in _EXPANSIONS:
            if isinstance(fetch, tensor_type):
                parts, contract = fetch_fn(fetch)
                builders = [self._map(p) for p in parts]
                return lambda values: contract([b(values) for b in builders])
        if isinstance(fetch, dict):
            keys = list(fetch.keys())
            builders = [self._map(fetch[k]) for k in keys]
            factory = type(fetch)

            def build_dict(values):
                items = [(k, b(values)) for k, b in zip(keys, builders)]
                if factory is collections.defaultdict:
                    result = collections.defaultdict(fetch.default_factory)
                    result.update(items)
                    return result
                try:
                    return factory(items)
                except TypeError:
                    return dict(items)

            return build_dict
        if isinstance(fetch, tuple) and hasattr(fetch, "_fields"):
            builders = [self._map(f) for f in fetch]
            cls = type(fetch)
            return lambda values: cls(*[b(values) for b in builders])
        if isinstance(fetch, (list, tuple)):
            builders = [self._map(f) for f in fetch]
            cls = type(fetch)
            if cls in (list, tuple):
                return lambda values: cls(b(values) for b in builders)
            return lambda values: cls([b(values) for b in builders])
        if hasattr(fetch, "_as_graph_element"):
            return self._map(fetch._as_graph_element())
        try:
            element = self.graph.as_graph_element(fetch)
        except (TypeError, ValueError) as err:
            raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}, must be "
                            f"a string or Tensor. ({err})") from None
        return self._map(element)

    def build(self, values):
        return self._builder(values)
