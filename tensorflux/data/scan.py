"""Stateful reductions over a dataset: `scan` and `group_by_reducer` (+ `Reducer`).

`scan_func(state, element) -> (new_state, output)` is traced once on the initial state's
structure; if the new state's static shapes are less specific than the initial state's, it is
traced again on the relaxed shapes (as TF does). `group_by_reducer` keeps one state per int64 key
(`init_func(key)`, then `reduce_func(state, element)` per element) and, at the end of the input,
emits `finalize_func(state)` for each key in the order the keys first appeared.
"""

from __future__ import annotations

from tensorflux.data import structure
from tensorflux.data.dataset_ops import Dataset, ElementError
from tensorflux.data.function import TracedFunction
from tensorflux.framework import dtypes, errors
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape

__all__ = ["scan", "group_by_reducer", "Reducer"]


def _state_fn(fn, state_template, state_types, state_shapes, element, what):
    """Traces `fn(state, element)`; returns (traced, number of state leaves)."""
    template = (state_template, element._template)
    types = list(state_types) + list(element._types)
    shapes = list(state_shapes) + list(element._shapes)
    traced = TracedFunction(fn, types, shapes, template, what)
    return traced


def _split_result(traced, state_template, state_types, what, name):
    result = traced.output_template
    if not isinstance(result, tuple) or len(result) != 2:
        raise TypeError(f"{what}: `{name}` must return a pair (new_state, output_element), "
                        f"got {result!r}")
    new_state, _ = result
    count = len(structure.flatten(state_template))
    if not structure.same_nesting(state_template, new_state):
        raise TypeError(f"{what}: the new state of `{name}` has structure {new_state!r}, "
                        f"which does not match the initial state {state_template!r}")
    new_types = traced.output_types[:count]
    if list(new_types) != list(state_types):
        raise TypeError(f"{what}: the element types for the new state must match the initial "
                        f"state. Expected {list(state_types)}; got {list(new_types)}.")
    return count


class ScanDataset(Dataset):
    def __init__(self, dataset, initial_state, scan_func):
        what = "tf.data.experimental.scan()"
        state = structure.map_structure(convert_to_tensor, initial_state)
        self._initial = structure.flatten(state)
        template = structure.map_structure(lambda _: 0, state)
        types = [t.dtype.base_dtype for t in self._initial]
        shapes = [t.shape for t in self._initial]

        def fn(old_state, element):
            return scan_func(old_state, element)

        traced = _state_fn(fn, template, types, shapes, dataset, what)
        count = _split_result(traced, template, types, what, "scan_func")
        new_shapes = traced.output_shapes[:count]
        if any(not new.is_compatible_with(old) or new != old
               for new, old in zip(new_shapes, shapes)):
            relaxed = [structure.most_specific_compatible(a, b)
                       for a, b in zip(shapes, new_shapes)]
            traced = _state_fn(fn, template, types, relaxed, dataset, what)
            _split_result(traced, template, types, what, "scan_func")
        self._count = count
        self._run = traced.runner()
        out_template = traced.output_template[1]
        super().__init__([dataset], self._initial + traced.captures, traced.output_types[count:],
                         traced.output_shapes[count:],
                         structure.map_structure(lambda _: 0, out_template))

    def _iterate(self, ctx):
        state = tuple(ctx.value(t) for t in self._initial)
        for element in self._inputs[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            try:
                result = self._run(ctx, state + tuple(element))
            except errors.OpError as err:
                yield ElementError(err)
                continue
            state = tuple(result[:self._count])
            yield tuple(result[self._count:])


def scan(initial_state, scan_func):
    """A transformation (for `Dataset.apply`) mapping `scan_func` over the elements while
    carrying a state: `scan_func(state, element) -> (new_state, output_element)`.

    Example:
        >>> running_sum = tf.data.Dataset.range(5).apply(
        ...     tf.data.experimental.scan(tf.constant(0, tf.int64),
        ...                               lambda total, x: (total + x, total + x)))
        >>> # 0, 1, 3, 6, 10
    """
    return lambda dataset: ScanDataset(dataset, initial_state, scan_func)


class Reducer:
    """`init_func(key) -> state`, `reduce_func(state, element) -> state` and
    `finalize_func(state) -> output` for `group_by_reducer`."""

    def __init__(self, init_func, reduce_func, finalize_func):
        self._init_func = init_func
        self._reduce_func = reduce_func
        self._finalize_func = finalize_func

    @property
    def init_func(self):
        return self._init_func

    @property
    def reduce_func(self):
        return self._reduce_func

    @property
    def finalize_func(self):
        return self._finalize_func


class GroupByReducerDataset(Dataset):
    def __init__(self, dataset, key_func, reducer):
        what = "tf.data.experimental.group_by_reducer()"
        key = TracedFunction(key_func, dataset._types, dataset._shapes, dataset._template, what)
        if (len(key.outputs) != 1 or key.output_types[0] is not dtypes.int64
                or not key.output_shapes[0].is_compatible_with([])):
            raise ValueError(f"{what}: `key_func` must return a single tf.int64 scalar tensor, "
                             f"got {key.output_types} with shapes {key.output_shapes}")
        init = TracedFunction(reducer.init_func, [dtypes.int64], [TensorShape([])], 0, what)
        state_template = structure.map_structure(lambda _: 0, init.output_template)
        types, shapes = init.output_types, init.output_shapes

        def reduce_fn(state, element):
            return reducer.reduce_func(state, element), ()

        traced = _state_fn(reduce_fn, state_template, types, shapes, dataset, what)
        _split_result(traced, state_template, types, what, "reduce_func")
        new_shapes = traced.output_shapes[:len(types)]
        if any(new != old for new, old in zip(new_shapes, shapes)):
            shapes = [structure.most_specific_compatible(a, b) for a, b in zip(shapes,
                                                                               new_shapes)]
            traced = _state_fn(reduce_fn, state_template, types, shapes, dataset, what)
        finalize = TracedFunction(reducer.finalize_func, types, shapes, state_template, what)
        self._key, self._init = key.runner(), init.runner()
        self._reduce, self._finalize = traced.runner(), finalize.runner()
        captures = key.captures + init.captures + traced.captures + finalize.captures
        super().__init__([dataset], captures, finalize.output_types, finalize.output_shapes,
                         structure.map_structure(lambda _: 0, finalize.output_template))

    def _iterate(self, ctx):
        states: dict = {}
        for element in self._inputs[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            try:
                key = self._key(ctx, element)[0]
                state = states.get(int(key))
                if state is None:
                    state = self._init(ctx, [key])
                states[int(key)] = self._reduce(ctx, tuple(state) + tuple(element))
            except errors.OpError as err:
                yield ElementError(err)
        for state in states.values():
            try:
                yield self._finalize(ctx, state)
            except errors.OpError as err:
                yield ElementError(err)


def group_by_reducer(key_func, reducer):
    """A transformation grouping elements by `key_func(element)` (int64 scalar) and reducing
    each group with `reducer` (a `Reducer`); one output element per key."""
    if not isinstance(reducer, Reducer):
        raise TypeError(f"group_by_reducer() expects a tf.data.experimental.Reducer, got "
                        f"{reducer!r}")
    return lambda dataset: GroupByReducerDataset(dataset, key_func, reducer)
