"""`tf.nest`: nested structures of lists, tuples, namedtuples and dicts.

A structure's leaves are everything that is not a list, tuple or mapping (None, strings,
arrays, tensors, sets). Mappings are visited in sorted key order and rebuilt with their own
type and key order, as in TensorFlow.
"""

from __future__ import annotations

import collections.abc

__all__ = ["flatten", "pack_sequence_as", "map_structure", "assert_same_structure",
           "is_nested"]


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def is_nested(seq) -> bool:
    """True for lists, tuples (namedtuples included) and mappings: the non-leaf values."""
    return isinstance(seq, (list, tuple, collections.abc.Mapping))


def _sorted_keys(mapping):
    try:
        return sorted(mapping)
    except TypeError as e:
        raise TypeError(f"nest only supports dicts with sortable keys: {e}") from None


def _children(value):
    if isinstance(value, collections.abc.Mapping):
        return [value[k] for k in _sorted_keys(value)]
    return list(value)


def flatten(structure, expand_composites=False) -> list:
    """The leaves of `structure` in depth-first order (mappings by sorted key).

    Example:
        >>> tf.nest.flatten({"b": 1, "a": [2, (3, None)]})
        [2, 3, None, 1]
    """
    out = []
    stack = [structure]
    while stack:
        value = stack.pop()
        if is_nested(value):
            stack.extend(reversed(_children(value)))
        else:
            out.append(value)
    return out


def _rebuild(instance, children):
    if isinstance(instance, collections.abc.Mapping):
        by_key = dict(zip(_sorted_keys(instance), children))
        values = [(k, by_key[k]) for k in instance]
        if isinstance(instance, collections.defaultdict):
            result = type(instance)(instance.default_factory)
            result.update(values)
            return result
        return type(instance)(values)
    if _is_namedtuple(instance):
        return type(instance)(*children)
    return type(instance)(children)


def _pack(structure, flat, index):
    if not is_nested(structure):
        return flat[index], index + 1
    children = []
    for child in _children(structure):
        value, index = _pack(child, flat, index)
        children.append(value)
    return _rebuild(structure, children), index


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    """Builds a structure shaped like `structure` from the leaves in `flat_sequence`.

    Raises:
        TypeError: `flat_sequence` is not a list or tuple.
        ValueError: the number of leaves differs.

    Example:
        >>> tf.nest.pack_sequence_as({"a": 0, "b": (0, 0)}, [1, 2, 3])
        {'a': 1, 'b': (2, 3)}
    """
    if not is_nested(flat_sequence) or isinstance(flat_sequence, collections.abc.Mapping):
        raise TypeError(f"Attempted to pack value:\n  {flat_sequence!r}\ninto a structure, but "
                        f"found incompatible type `{type(flat_sequence)}` instead.")
    flat = list(flat_sequence)
    if not is_nested(structure):
        if len(flat) != 1:
            raise ValueError(f"Structure is a scalar but len(flat_sequence) == {len(flat)} > 1")
        return flat[0]
    count = len(flatten(structure))
    if count != len(flat):
        raise ValueError(f"Could not pack sequence. Structure had {count} atoms, but "
                         f"flat_sequence had {len(flat)} items.  Structure: {structure!r}, "
                         f"flat_sequence: {flat!r}.")
    return _pack(structure, flat, 0)[0]


def _same_type(a, b) -> bool:
    if type(a) is type(b):
        return True
    if isinstance(a, collections.abc.Mapping) and isinstance(b, collections.abc.Mapping):
        return True
    if _is_namedtuple(a) and _is_namedtuple(b):
        return type(a).__name__ == type(b).__name__ and type(a)._fields == type(b)._fields
    return False


def _check(a, b, check_types, path):
    where = f" at {path}" if path else ""
    if is_nested(a) != is_nested(b):
        leafy = b if is_nested(a) else a
        raise ValueError(f"The two structures don't have the same nested structure{where}: "
                         f"{leafy!r} is not a sequence while the other is")
    if not is_nested(a):
        return
    if check_types and not _same_type(a, b):
        raise TypeError(f"The two structures don't have the same sequence type{where}: "
                        f"{type(a).__name__} vs {type(b).__name__}")
    if isinstance(a, collections.abc.Mapping) and isinstance(b, collections.abc.Mapping):
        if set(a) != set(b):
            raise ValueError(f"The two dictionaries don't have the same set of keys{where}: "
                             f"{_sorted_keys(a)} vs {_sorted_keys(b)}")
        keys = _sorted_keys(a)
        pairs = [(k, a[k], b[k]) for k in keys]
    else:
        if len(a) != len(b):
            raise ValueError(f"The two structures don't have the same number of elements"
                             f"{where}: {len(a)} vs {len(b)}")
        pairs = [(i, x, y) for i, (x, y) in enumerate(zip(_children(a), _children(b)))]
    for key, x, y in pairs:
        _check(x, y, check_types, f"{path}[{key!r}]")


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False) -> None:
    """Checks that two structures nest the same way.

    Args:
        nest1, nest2: the structures.
        check_types: also require the same sequence types (list vs tuple; namedtuples match
            by name and fields; any two mappings match).

    Raises:
        ValueError: the nesting, lengths or dict keys differ.
        TypeError: `check_types` and a sequence type differs.
    """
    try:
        _check(nest1, nest2, check_types, "")
    except (ValueError, TypeError) as e:
        raise type(e)(f"The two structures don't have the same nested structure.\n\n"
                      f"First structure: {nest1!r}\n\nSecond structure: {nest2!r}\n\n"
                      f"More specifically: {e}") from None


def map_structure(func, *structure, **kwargs):
    """Applies `func` to the corresponding leaves of the structures; returns a structure like
    the first one.

    Args:
        func: called with one leaf from each structure.
        *structure: structures with the same nesting.
        check_types: (keyword) passed to `assert_same_structure` (default True).
        expand_composites: (keyword) accepted for TF compatibility.

    Example:
        >>> tf.nest.map_structure(lambda x, y: x + y, (1, [2]), (10, [20]))
        (11, [22])
    """
    if not callable(func):
        raise TypeError(f"func must be callable, got: {func!r}")
    if not structure:
        raise ValueError("Must provide at least one structure")
    check_types = kwargs.pop("check_types", True)
    kwargs.pop("expand_composites", None)
    if kwargs:
        raise ValueError(f"Only valid keyword arguments are `check_types` and "
                         f"`expand_composites`, not: `{', '.join(kwargs)}`")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    flats = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flats)])
