"""Function transformations: `map`, `filter`, `flat_map` and `interleave`.

Each traces its function once, when the dataset is built (see `function.py`), and runs the
traced graph per element. `flat_map`/`interleave` functions return a Dataset built inside the
function graph; per input element the tensors that dataset captures are computed by the traced
graph and the inner dataset is iterated with them.
"""

from __future__ import annotations

from tensorflux.data import structure
from tensorflux.data.dataset_ops import Dataset, ElementError, RunContext, scalar_arg, start
from tensorflux.data.function import TracedFunction, as_bool
from tensorflux.framework import dtypes, errors
from tensorflux.framework.tensor_conversion import constant_value


class MapDataset(Dataset):
    def __init__(self, dataset, map_func):
        self._fn = TracedFunction(map_func, dataset._types, dataset._shapes, dataset._template,
                                  "Dataset.map()")
        self._run = self._fn.runner()
        super().__init__([dataset], self._fn.captures, self._fn.output_types,
                         self._fn.output_shapes, self._fn.output_template)

    def _iterate(self, ctx):
        run = self._run
        for element in self._inputs[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            try:
                yield run(ctx, element)
            except errors.OpError as err:
                yield ElementError(err)


class FilterDataset(Dataset):
    def __init__(self, dataset, predicate):
        fn = TracedFunction(predicate, dataset._types, dataset._shapes, dataset._template,
                            "Dataset.filter()")
        if (len(fn.outputs) != 1 or structure.is_nested(fn.output_template)
                or fn.output_types[0] is not dtypes.bool_
                or not fn.output_shapes[0].is_compatible_with([])):
            raise ValueError("`predicate` return type must be convertible to a scalar boolean "
                             f"tensor. Was {fn.output_types} with shapes {fn.output_shapes}.")
        self._fn = fn
        self._run = fn.runner()
        super().__init__([dataset], fn.captures, dataset._types, dataset._shapes,
                         dataset._template)

    def _iterate(self, ctx):
        run = self._run
        for element in self._inputs[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            try:
                keep = as_bool(run(ctx, element)[0])
            except errors.OpError as err:
                yield ElementError(err)
                continue
            if keep:
                yield element


class InterleaveDataset(Dataset):
    """`cycle_length` inner datasets open at once; `block_length` elements from each in turn.

    An exhausted inner dataset frees its slot (the next input element opens there when the
    cycle comes back to it); the order is TF's.
    """

    def __init__(self, dataset, map_func, cycle_length, block_length, what: str):
        fn = TracedFunction(map_func, dataset._types, dataset._shapes, dataset._template, what,
                            tensor_result=False)
        inner = fn.result
        if not isinstance(inner, Dataset):
            raise TypeError(f"The function passed to {what} must return a Dataset, got "
                            f"{type(inner).__name__}")
        self._what = what
        self._inner = inner
        keys, fetched, constants = [], [], {}
        for tensor in inner._all_captures():
            value = None if tensor.graph is fn.graph else constant_value(tensor)
            if value is not None:
                constants[tensor] = value
                continue
            # a tensor of the function, or one of an enclosing graph captured through it
            keys.append(tensor)
            fetched.append(tensor if tensor.graph is fn.graph
                           else fn.graph._capture_tensor(tensor))
        fn.captures = list(fn.graph.external)
        self._fetched = keys
        self._constants = constants
        self._fn = fn
        self._run = fn.fetch(fetched)
        self._cycle = scalar_arg(cycle_length, "cycle_length", what)
        self._block = scalar_arg(block_length, "block_length", what)
        super().__init__([dataset], [self._cycle, self._block] + fn.captures, inner._types,
                         inner._shapes, inner._template)

    def _open(self, ctx, element):
        """The inner dataset's elements for one input element (a failure is one error)."""
        if type(element) is ElementError:
            return iter((element,))
        values = dict(self._constants)
        try:
            values.update(zip(self._fetched, self._run(ctx, list(element))))
            return start(self._inner, RunContext(values, ctx.state))
        except errors.OpError as err:
            return iter((ElementError(err),))

    def _check(self, ctx):
        cycle, block = ctx.scalar(self._cycle), ctx.scalar(self._block)
        if cycle <= 0 or block <= 0:
            raise errors.InvalidArgumentError(None, None, f"{self._what}: cycle_length and "
                                              f"block_length must be greater than zero, got "
                                              f"{cycle} and {block}")

    def _iterate(self, ctx):
        cycle, block = ctx.scalar(self._cycle), ctx.scalar(self._block)
        yield from interleave(self._inputs[0]._iterate(ctx),
                              lambda element: self._open(ctx, element), cycle, block)


def interleave(source, open_element, cycle: int, block: int):
    """TF's interleave order: `cycle` slots, `block` consecutive outputs per slot; an exhausted
    slot is refilled from `source` (through `open_element`) when the cycle reaches it again."""
    if cycle == 1:
        for element in source:
            yield from open_element(element)
        return
    slots = [None] * cycle
    index = produced = opened = 0
    end_of_input = False
    while not end_of_input or opened:
        current = slots[index]
        if current is not None:
            try:
                value = next(current)
            except StopIteration:
                slots[index] = None
                opened -= 1
                index, produced = (index + 1) % cycle, 0
                continue
            if type(value) is ElementError:  # TF stays on this slot after a failure
                yield value
                continue
            produced += 1
            if produced == block:
                index, produced = (index + 1) % cycle, 0
            yield value
        elif not end_of_input:
            try:
                element = next(source)
            except StopIteration:
                end_of_input = True
                continue
            slots[index] = open_element(element)
            opened += 1
        else:
            index, produced = (index + 1) % cycle, 0


__all__: list = []
