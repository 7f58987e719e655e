"""contrib.layers utilities: output aliases ("end points"), per-variable collections, conds.

A layer's output gets an alias (its scope name) and is added to `outputs_collections`;
`convert_collection_to_dict` turns such a collection into {alias: tensor}, which is how slim
networks return their end points. Aliases live in a side table keyed weakly by tensor.
"""

from __future__ import annotations

import collections
import weakref

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value as _constant_value
from tensorflux.framework.tensor_shape import dimension_value
from tensorflux.ops.control_flow import primitives as control_flow_ops

__all__ = ["append_tensor_alias", "collect_named_outputs", "get_tensor_aliases",
           "gather_tensors_aliases", "convert_collection_to_dict", "get_variable_collections",
           "constant_value", "smart_cond", "static_cond", "last_dimension", "two_element_tuple",
           "n_positive_integers"]

_aliases: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def append_tensor_alias(tensor, alias: str):
    """Adds `alias` (a trailing '/' removed) to `tensor`'s aliases; returns `tensor`."""
    if alias.endswith("/"):
        alias = alias[:-1]
    _aliases.setdefault(tensor, []).append(alias)
    return tensor


def collect_named_outputs(collections_, alias, outputs):
    """Gives `outputs` the alias `alias` and adds it to `collections_` (if any)."""
    if collections_:
        append_tensor_alias(outputs, alias)
        graph_mod.add_to_collections(collections_, outputs)
    return outputs


def get_tensor_aliases(tensor) -> list:
    """The aliases of `tensor`, else its name without ':0'."""
    if tensor in _aliases:
        return list(_aliases[tensor])
    name = tensor.name
    return [name[:-2] if name.endswith(":0") else name]


def gather_tensors_aliases(tensors) -> list:
    """All aliases of `tensors`, in order."""
    return [alias for t in tensors for alias in get_tensor_aliases(t)]


def convert_collection_to_dict(collection, clear_collection=False):
    """{alias: tensor} for the tensors of `collection` (an OrderedDict, collection order).

    Args:
        collection: the collection key.
        clear_collection: empty the collection afterwards.
    """
    result = collections.OrderedDict(
        (alias, tensor) for tensor in graph_mod.get_collection(collection)
        for alias in get_tensor_aliases(tensor))
    if clear_collection:
        del graph_mod.get_collection_ref(collection)[:]
    return result


def get_variable_collections(variables_collections, name):
    """`variables_collections[name]` for a dict, else `variables_collections` itself."""
    if isinstance(variables_collections, dict):
        return variables_collections.get(name, None)
    return variables_collections


def constant_value(value_or_tensor_or_var, dtype=None):
    """The constant value of a Python value, Tensor or Variable (None when not constant).

    Raises:
        ValueError: `value_or_tensor_or_var` is None.
    """
    if value_or_tensor_or_var is None:
        raise ValueError("value_or_tensor_or_var cannot be None")
    value = value_or_tensor_or_var
    if isinstance(value, Tensor):
        value = _constant_value(value)
        if value is not None and getattr(value, "ndim", 0) == 0:
            value = value.item()
    elif hasattr(value, "op") and hasattr(value, "initial_value"):
        return None
    if dtype is not None and value is not None:
        value = dtype.as_numpy_dtype(value)
    return value


def static_cond(pred, fn1, fn2):
    """`fn1()` if the Python bool `pred` else `fn2()`.

    Raises:
        TypeError: a branch is not callable.
    """
    if not callable(fn1):
        raise TypeError("fn1 must be callable.")
    if not callable(fn2):
        raise TypeError("fn2 must be callable.")
    return fn1() if pred else fn2()


def smart_cond(pred, fn1, fn2, name=None):
    """`static_cond` when `pred` is known at graph-build time, else `tf.cond`."""
    value = constant_value(pred) if isinstance(pred, Tensor) else pred
    if value is not None and not isinstance(value, Tensor):
        return static_cond(bool(value), fn1, fn2)
    return control_flow_ops.cond(pred, fn1, fn2, name=name)


def last_dimension(shape, min_rank=1) -> int:
    """The last dimension of `shape` (a TensorShape).

    Raises:
        ValueError: unknown rank, rank < min_rank, or unknown last dimension.
    """
    dims = shape._dim_list
    if dims is None:
        raise ValueError("dims of shape must be known but is None")
    if len(dims) < min_rank:
        raise ValueError(f"rank of shape must be at least {min_rank} not: {len(dims)}")
    value = dimension_value(dims[-1])
    if value is None:
        raise ValueError("last dimension shape must be known but is None")
    return value


def two_element_tuple(int_or_tuple):
    """(a, b) from an int, a pair, or a TensorShape of two dims.

    Raises:
        ValueError: any other value.
    """
    if isinstance(int_or_tuple, (list, tuple)):
        if len(int_or_tuple) != 2:
            raise ValueError(f"Must be a list with 2 elements: {int_or_tuple}")
        return int(int_or_tuple[0]), int(int_or_tuple[1])
    if isinstance(int_or_tuple, int):
        return int(int_or_tuple), int(int_or_tuple)
    if hasattr(int_or_tuple, "as_list"):
        return two_element_tuple(int_or_tuple.as_list())
    raise ValueError("Must be an int, a list with 2 elements or a TensorShape of length 2")


def n_positive_integers(n, value) -> tuple:
    """`value` (an int or n ints) as a tuple of n positive ints.

    Raises:
        TypeError, ValueError: a wrong type, length or a non-positive value.
    """
    if isinstance(value, int):
        if value <= 0:
            raise ValueError(f"expected a positive integer, got {value}")
        return (value,) * n
    values = tuple(value)
    if len(values) != n or not all(isinstance(v, int) for v in values):
        raise TypeError(f"expected an integer or a sequence of {n} integers, got {value!r}")
    if any(v <= 0 for v in values):
        raise ValueError(f"expected positive integers, got {value!r}")
    return values
