"""Higher-order functions on sequences: `tf.map_fn`, `tf.scan`, `tf.foldl`, `tf.foldr`.

Each is one `tf.while_loop` over the first dimension of `elems`, reading elements from
TensorArrays (`unstack`) and, for map_fn and scan, writing results to TensorArrays that are
stacked at the end. Elements and results may be nested structures of tensors.
"""

from __future__ import annotations

from tensorflux.framework import dtypes, nest
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops.control_flow.while_loop import while_loop
from tensorflux.ops.data_flow.tensor_array_class import TensorArray

__all__ = ["map_fn", "scan", "foldl", "foldr"]


def _elems_flat(elems, what: str) -> list:
    flat = [convert_to_tensor(e, name="elem") for e in nest.flatten(elems)]
    if not flat:
        raise ValueError(f"{what}: elems must be a Tensor or a (possibly nested) sequence of "
                         "tensors, got an empty structure.")
    for e in flat:
        if e.shape.ndims == 0:
            raise ValueError(f"{what}: elements in elems must be at least 1-D (unstacked along "
                             f"the first dimension), got a scalar {e.name}.")
    return flat


def _length(flat) -> object:
    """The common size of the first dimension (a Python int when static)."""

    static = [e.shape._dim_list[0] for e in flat if e.shape.ndims is not None]
    known = [d for d in static if d is not None]
    if known:
        if any(d != known[0] for d in known):
            raise ValueError(f"All elems must have the same first dimension, got "
                             f"{[e.shape for e in flat]}")
        return int(known[0])
    return array_ops.shape(flat[0])[0]


def _unstacked(flat, n, infer_shape: bool = True) -> list:
    return [TensorArray(e.dtype.base_dtype, size=n, dynamic_size=False, infer_shape=infer_shape,
                        element_shape=TensorShape(e.shape.as_list()[1:]) if e.shape.ndims
                        else None).unstack(e) for e in flat]


def _static_n(n):
    return n if isinstance(n, int) else None


def _stack_results(accs, n, element_shapes) -> list:
    results = []
    for ta, shape in zip(accs, element_shapes):
        value = ta.stack()
        if shape is not None and shape.ndims is not None:
            value.set_shape(TensorShape([_static_n(n)] + shape.as_list()))
        results.append(value)
    return results


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None):
    """Applies `fn` to each element of `elems` (unstacked on dimension 0) and stacks results.

    Args:
        fn: callable taking one element (structured like `elems`).
        elems: a tensor or nested structure of tensors with a common first dimension.
        dtype: the structure of output dtypes when it differs from `elems`.
        parallel_iterations: iterations run in parallel (default 10).
        back_prop, swap_memory: as for `tf.while_loop`.
        infer_shape: check that all results share a static shape.
        name: name scope (default "map").

    Returns:
        Stacked results, structured like `dtype` (or `elems`).

    Raises:
        TypeError: fn is not callable.
        ValueError: elems is empty or scalar, or fn returns the wrong structure.

    Example:
        >>> squares = tf.map_fn(lambda x: x * x, tf.constant([1.0, 2.0, 3.0]))
    """
    if not callable(fn):
        raise TypeError("fn must be callable.")
    if parallel_iterations is None:
        parallel_iterations = 10
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "map"):
        flat = _elems_flat(elems, "map_fn")
        out_structure = elems if dtype is None else dtype
        out_dtypes = [e.dtype.base_dtype for e in flat] if dtype is None else \
            [dtypes.as_dtype(d).base_dtype for d in nest.flatten(dtype)]
        n = _length(flat)
        elems_ta = _unstacked(flat, n)
        accs = [_result_array(d, n, infer_shape) for d in out_dtypes]
        shapes = [None] * len(accs)

        def body(i, tas):
            packed = nest.pack_sequence_as(elems, [ta.read(i) for ta in elems_ta])
            values = fn(packed)
            try:
                nest.assert_same_structure(out_structure, values, check_types=False)
            except ValueError as err:
                raise ValueError(f"map_fn: the structure of fn's output does not match dtype "
                                 f"(or elems): {err}") from None
            flat_values = [convert_to_tensor(v) for v in nest.flatten(values)]
            for k, value in enumerate(flat_values):
                shapes[k] = value.shape
            return i + 1, [ta.write(i, v) for ta, v in zip(tas, flat_values)]

        _, accs = _loop(lambda i, _: i < n, body, [0, accs], parallel_iterations, back_prop,
                        swap_memory)
        return nest.pack_sequence_as(out_structure, _stack_results(accs, n, shapes))


def _result_array(dtype, n, infer_shape):
    return TensorArray(dtype, size=n, dynamic_size=False, infer_shape=infer_shape)


def _loop(cond, body, loop_vars, parallel_iterations, back_prop, swap_memory):
    return while_loop(cond, body, loop_vars, parallel_iterations=parallel_iterations,
                      back_prop=back_prop, swap_memory=swap_memory, return_same_structure=True)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
         infer_shape=True, reverse=False, name=None):
    """Cumulative application of `fn(accumulator, element)` over `elems`; stacks each result.

    Without an initializer the first element (the last with `reverse`) is the initial
    accumulator and the first result.

    Args:
        fn: callable `(acc, x) -> new acc`, acc structured like `initializer` (or `elems`).
        elems: a tensor or nested structure of tensors with a common first dimension.
        initializer: the initial accumulator (nested structure allowed).
        reverse: scan from the last element to the first.

    Returns:
        The stacked accumulators, structured like the initializer (or `elems`).

    Example:
        >>> tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3]))   # [1, 3, 6]
    """
    if not callable(fn):
        raise TypeError("fn must be callable.")
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "scan"):
        flat = _elems_flat(elems, "scan")
        n = _length(flat)
        elems_ta = _unstacked(flat, n)
        last = n - 1
        if initializer is None:
            structure = elems
            first = last if reverse else 0
            init = [ta.read(first) for ta in elems_ta]
            start = 1
        else:
            structure = initializer
            init = [convert_to_tensor(v) for v in nest.flatten(initializer)]
            start = 0
        accs = [_result_array(a.dtype.base_dtype, n, infer_shape) for a in init]
        if initializer is None:
            accs = [ta.write(last if reverse else 0, a) for ta, a in zip(accs, init)]
        shapes = [a.shape for a in init]

        def body(i, acc, tas):
            index = last - i if reverse else i
            packed_acc = nest.pack_sequence_as(structure, acc)
            packed_x = nest.pack_sequence_as(elems, [ta.read(index) for ta in elems_ta])
            new = fn(packed_acc, packed_x)
            try:
                nest.assert_same_structure(structure, new, check_types=False)
            except ValueError as err:
                raise ValueError(f"scan: fn must return the structure of the accumulator: "
                                 f"{err}") from None
            new = [convert_to_tensor(v) for v in nest.flatten(new)]
            return i + 1, new, [ta.write(index, v) for ta, v in zip(tas, new)]

        _, _, accs = _loop(lambda i, a, t: i < n, body, [start, init, accs],
                           parallel_iterations, back_prop, swap_memory)
        return nest.pack_sequence_as(structure, _stack_results(accs, n, shapes))


def _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, reverse,
          what):
    if not callable(fn):
        raise TypeError("fn must be callable.")
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or what):
        flat = _elems_flat(elems, what)
        n = _length(flat)
        elems_ta = _unstacked(flat, n)
        last = n - 1
        if initializer is None:
            structure = elems
            init = [ta.read(last if reverse else 0) for ta in elems_ta]
            start = 1
        else:
            structure = initializer
            init = [convert_to_tensor(v) for v in nest.flatten(initializer)]
            start = 0

        def body(i, acc):
            index = last - i if reverse else i
            packed_acc = nest.pack_sequence_as(structure, acc)
            packed_x = nest.pack_sequence_as(elems, [ta.read(index) for ta in elems_ta])
            new = fn(packed_acc, packed_x)
            try:
                nest.assert_same_structure(structure, new, check_types=False)
            except ValueError as err:
                raise ValueError(f"{what}: fn must return the structure of the accumulator: "
                                 f"{err}") from None
            return i + 1, [convert_to_tensor(v) for v in nest.flatten(new)]

        _, result = _loop(lambda i, a: i < n, body, [start, init], parallel_iterations,
                          back_prop, swap_memory)
        return nest.pack_sequence_as(structure, result)


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """Folds `fn(acc, x)` over `elems` from first to last; returns the final accumulator.

    Example:
        >>> tf.foldl(lambda a, x: a + x, tf.constant([1, 2, 3]))   # 6
    """
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name,
                 False, "foldl")


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """Folds `fn(acc, x)` over `elems` from last to first; returns the final accumulator.

    Example:
        >>> tf.foldr(lambda a, x: a * 10 + x, tf.constant([1, 2, 3]))   # 321
    """
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name,
                 True, "foldr")
