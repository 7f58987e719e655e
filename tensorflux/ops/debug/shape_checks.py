"""`tf.debugging.assert_shapes`: shapes and symbolic dimension relations of several tensors.

Each constraint is `(tensor, shape)`; a shape entry is an int (that size), a symbol (any
hashable: equal symbols must have equal sizes across all tensors), or None / '.' (any size).
A leading `...` or '*' lets outer dimensions vary (only the inner-most are constrained).
Scalars and empty shapes both count as one dimension of size one. What the static shapes
settle is checked at once (ValueError for a rank, InvalidArgumentError for a size, as TF
1.15); the rest becomes Assert ops.
"""

from __future__ import annotations

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops.array import shapes as shapes_mod
from tensorflux.ops.control_flow.primitives import group, no_op
from tensorflux.ops.debug import checks

__all__ = ["assert_shapes"]


def _sizes(x):
    """The sizes of `x`'s dimensions: ints where static, scalar tensors elsewhere."""
    rank = x.shape.ndims
    if rank == 0:
        return [1]
    dynamic = None
    sizes = []
    for i, d in enumerate(x.shape.as_list()):
        if d is None:
            if dynamic is None:
                dynamic = shapes_mod.shape(x)
            sizes.append(dynamic[i])
        else:
            sizes.append(int(d))
    return sizes


def _parse(spec):
    spec = list(spec)
    outer = bool(spec) and (spec[0] is Ellipsis or spec[0] == "*")
    dims = spec[1:] if outer else spec
    return outer, dims if dims else [1]


def _is_any(entry) -> bool:
    return entry is None or (isinstance(entry, str) and entry == ".")


def _as_int(entry):
    if isinstance(entry, bool):
        return None
    try:
        return int(entry)
    except (TypeError, ValueError):
        return None


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """Asserts the shapes of tensors and the relations between their dimensions.

    Args:
        shapes: a dict `{tensor: shape}` or an iterable of `(tensor, shape)` pairs.
        data, summarize, message: as for `tf.debugging.assert_equal`.
        name: name scope (default "assert_shapes").

    Returns:
        An op that runs the remaining (dynamic) checks; a NoOp when all were static.

    Raises:
        ValueError: a static rank contradicts its shape.
        InvalidArgumentError: static sizes contradict a shape or a symbol.
    """
    items = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "assert_shapes"):
        tensors = [(convert_to_tensor(x, name="x"), spec) for x, spec in items]
        asserts = []
        symbols: dict = {}
        for x, spec in tensors:
            outer, dims = _parse(spec)
            rank = len(dims)
            if x.shape.ndims == 0 and not outer and rank == 1:
                pass  # a scalar is one dimension of size one
            elif outer:
                asserts.append(checks.assert_rank_at_least(x, rank, message=message))
            else:
                asserts.append(checks.assert_rank(x, rank, message=message))
            if x.shape.ndims is None:
                continue  # sizes of an unknown rank are checked once the rank assert holds
            sizes = _sizes(x)[-rank:] if x.shape.ndims else [1]
            for i, (entry, size) in enumerate(zip(dims, sizes)):
                if _is_any(entry):
                    continue
                where = (f"{message}  " if message else "") + \
                    f"Specified by tensor {x.name} dimension {i - rank}."
                explicit = _as_int(entry)
                if explicit is not None:
                    expected = explicit
                else:
                    first = symbols.setdefault(entry, (x, size))
                    if first[0] is x and first[1] is size:
                        continue
                    expected = first[1]
                    where += f"  Symbol {entry!r} first defined by tensor {first[0].name}."
                if isinstance(size, int) and isinstance(expected, int):
                    checks._assert_static(size == expected, [
                        f"{where}  Tensor {x.name} dimension {i - rank} must have size "
                        f"{expected}.  Received size {size}, shape {x.shape}"])
                    continue
                asserts.append(checks.assert_equal(
                    size, expected, data=data, summarize=summarize,
                    message=f"{where}  Tensor {x.name} dimension {i - rank} must have size"))
        asserts = [a for a in asserts if a is not None and a.type != "NoOp"]
        return group(*asserts) if asserts else no_op(name="static_checks_determined_all_ok")
