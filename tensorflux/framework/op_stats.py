"""Per-op statistics (TF1 `ops.OpStats`, `ops.RegisterStatistics`,
`ops.get_stats_for_node_def`): functions registered per (op type, statistic) estimate a
cost such as "flops" of one node from the static shapes in its graph. Profilers sum them.
"""

from __future__ import annotations

from tensorflux.framework.registry import Registry

__all__ = ["OpStats", "RegisterStatistics", "get_stats_for_node_def", "has_statistic"]

_STATISTICS = Registry("statistics function")


class OpStats:
    """One statistic of one op: its type (e.g. "flops") and a value (None when unknown).

    Values of the same type add up with `+` / `+=`; an unknown value counts as zero once the
    other is known.
    """

    def __init__(self, statistic_type: str, value=None):
        self.statistic_type = statistic_type
        self.value = value

    def __iadd__(self, other):
        if not isinstance(other, OpStats):
            raise TypeError(f"Can't add an OpStats to {type(other).__name__}")
        if other.statistic_type != self.statistic_type:
            raise ValueError(f"Can't add an OpStats of type {other.statistic_type} to one of "
                             f"type {self.statistic_type}.")
        if self.value is None:
            self.value = other.value
        elif other.value is not None:
            self.value += other.value
        return self

    def __add__(self, other):
        total = OpStats(self.statistic_type, self.value)
        total += other
        return total

    def __repr__(self):
        return f"OpStats({self.statistic_type!r}, {self.value!r})"


class RegisterStatistics:
    """Decorator registering `fn(graph, node_def) -> OpStats` for `op_type`'s `statistic_type`.

    Raises:
        TypeError: `op_type` or `statistic_type` is not a string.
        KeyError: that pair already has a function.
    """

    def __init__(self, op_type: str, statistic_type: str):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string.")
        if not isinstance(statistic_type, str):
            raise TypeError("statistic_type must be a string.")
        self._key = f"{op_type},{statistic_type}"

    def __call__(self, fn):
        _STATISTICS.register(self._key, fn)
        return fn


def get_stats_for_node_def(graph, node, statistic_type: str) -> OpStats:
    """The `statistic_type` statistic of `node` (a NodeDef of `graph`); value None when no
    function is registered for its op type."""
    fn = _STATISTICS.get(f"{node.op},{statistic_type}")
    if fn is None:
        return OpStats(statistic_type)
    result = fn(graph, node)
    return result if result is not None else OpStats(statistic_type)


def has_statistic(op_type: str, statistic_type: str) -> bool:
    """Whether a function is registered for `op_type`'s `statistic_type`."""
    return _STATISTICS.get(f"{op_type},{statistic_type}") is not None


def static_shape(graph, name: str):
    """The static shape of tensor `name` ("op" means "op:0") in `graph`."""
    if ":" not in name:
        name = f"{name}:0"
    return graph.get_tensor_by_name(name).get_shape()
