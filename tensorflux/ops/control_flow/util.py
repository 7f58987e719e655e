"""Helpers shared by the control-flow modules: nested structures and context queries.

Nested structures follow `tf.nest`: lists, tuples, namedtuples and dicts (flattened in sorted
key order) are sequences; everything else, TensorArrays included, is a leaf.

Context queries answer "where does this value live": every op created inside a `cond` branch
or a `while_loop` records its control-flow context; an `Exit`'s value lives in the context
that encloses its loop.
"""

from __future__ import annotations

import collections

__all__ = ["flatten", "pack_sequence_as", "map_structure", "assert_same_structure",
           "is_sequence"]


def is_sequence(value) -> bool:
    return isinstance(value, (list, tuple, dict, collections.abc.Mapping)) and \
        not hasattr(value, "_as_graph_element")


def _items(value):
    if isinstance(value, collections.abc.Mapping):
        return [value[k] for k in sorted(value)]
    return list(value)


def flatten(structure) -> list:
    """The leaves of `structure`, depth first (dicts in sorted key order)."""
    if not is_sequence(structure):
        return [structure]
    flat = []
    for item in _items(structure):
        flat.extend(flatten(item))
    return flat


def _rebuild(template, items):
    if isinstance(template, collections.abc.Mapping):
        keys = sorted(template)
        result = dict(zip(keys, items))
        if isinstance(template, collections.OrderedDict):
            return type(template)((k, result[k]) for k in template)
        try:
            return type(template)((k, result[k]) for k in template)
        except TypeError:
            return result
    if isinstance(template, tuple) and hasattr(template, "_fields"):
        return type(template)(*items)
    if isinstance(template, tuple):
        return tuple(items)
    return list(items)


def _pack(structure, flat, index):
    if not is_sequence(structure):
        return flat[index], index + 1
    items = []
    for item in _items(structure):
        packed, index = _pack(item, flat, index)
        items.append(packed)
    return _rebuild(structure, items), index


def pack_sequence_as(structure, flat_sequence):
    """Rebuilds `structure` with the leaves taken in order from `flat_sequence`."""
    flat_sequence = list(flat_sequence)
    count = len(flatten(structure))
    if count != len(flat_sequence):
        raise ValueError(f"Could not pack sequence: the structure has {count} elements but the "
                         f"flat sequence has {len(flat_sequence)}.")
    return _pack(structure, flat_sequence, 0)[0]


def map_structure(fn, *structures):
    """Applies `fn` leafwise over structures of the same shape."""
    if not structures:
        raise ValueError("map_structure needs at least one structure.")
    for other in structures[1:]:
        assert_same_structure(structures[0], other)
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [fn(*leaves) for leaves in zip(*flats)])


def _kind(value) -> str:
    if isinstance(value, collections.abc.Mapping):
        return "dict"
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value).__name__
    return "sequence"


def assert_same_structure(first, second, check_types: bool = False) -> None:
    """Raises ValueError (or TypeError for a type difference) unless the nestings match."""
    first_seq, second_seq = is_sequence(first), is_sequence(second)
    if first_seq != second_seq:
        raise ValueError(f"The two structures don't have the same nested structure: "
                         f"{first!r} and {second!r}.")
    if not first_seq:
        return
    if check_types and _kind(first) != _kind(second):
        raise TypeError(f"The two structures don't have the same sequence type: "
                        f"{type(first).__name__} and {type(second).__name__}.")
    if isinstance(first, collections.abc.Mapping) and isinstance(second, collections.abc.Mapping):
        if sorted(first) != sorted(second):
            raise ValueError(f"The two dictionaries don't have the same keys: "
                             f"{sorted(first)} and {sorted(second)}.")
    a, b = _items(first), _items(second)
    if len(a) != len(b):
        raise ValueError(f"The two structures don't have the same number of elements: "
                         f"{len(a)} vs {len(b)} ({first!r} and {second!r}).")
    for x, y in zip(a, b):
        assert_same_structure(x, y, check_types)


# -- control-flow contexts --------------------------------------------------------------------

EXIT_OPS = frozenset({"Exit", "RefExit"})
ENTER_OPS = frozenset({"Enter", "RefEnter"})
SWITCH_OPS = frozenset({"Switch", "RefSwitch"})
MERGE_OPS = frozenset({"Merge", "RefMerge"})
NEXT_OPS = frozenset({"NextIteration", "RefNextIteration"})


def op_context(op):
    return op._control_flow_context


def value_context(tensor):
    """The context a tensor's value lives in (an Exit's value is outside its loop)."""
    ctx = tensor.op._control_flow_context
    if ctx is not None and tensor.op.type in EXIT_OPS:
        return ctx.outer_context
    return ctx


def is_ancestor(ancestor, ctx) -> bool:
    """True when `ctx` is `ancestor` or nested (at any depth) inside it."""
    while ctx is not None:
        if ctx is ancestor:
            return True
        ctx = ctx.outer_context
    return ancestor is None


def while_context_of(ctx):
    """The innermost while-loop context at or around `ctx` (None outside loops)."""
    while ctx is not None and not ctx.is_while_context:
        ctx = ctx.outer_context
    return ctx


def is_loop_constant_enter(op) -> bool:
    return op.type in ENTER_OPS and bool(op._attrs.get("is_constant", False))


def is_loop_exit(op) -> bool:
    return op.type in EXIT_OPS
