"""Transformations that select elements: `unique`, `take_while` and `rejection_resample`
(tf.data.experimental)."""

from __future__ import annotations

import numpy as np

from tensorflux.data.dataset_ops import Dataset, ElementError
from tensorflux.data.function import TracedFunction, as_bool
from tensorflux.framework import dtypes, errors
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.random.seed import get_seed

__all__ = ["unique", "take_while", "rejection_resample"]


class UniqueDataset(Dataset):
    """The first occurrence of each element (one int32, int64 or string component)."""

    def __init__(self, dataset):
        if len(dataset._types) != 1 or dataset._types[0] not in (dtypes.int32, dtypes.int64,
                                                                 dtypes.string):
            raise TypeError(f"`tf.data.experimental.unique()` only supports datasets with a "
                            f"single tf.int32, tf.int64 or tf.string component, got "
                            f"{dataset.output_types}")
        super().__init__([dataset], [], dataset._types, dataset._shapes, dataset._template)

    def _iterate(self, ctx):
        seen = set()
        for element in self._inputs[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            value = np.asarray(element[0])
            key = (value.shape, value.tobytes()) if value.dtype != object else \
                (value.shape, tuple(value.reshape(-1).tolist()))
            if key not in seen:
                seen.add(key)
                yield element


def unique():
    """A transformation dropping repeated elements (each kept at its first occurrence)."""
    return UniqueDataset


class TakeWhileDataset(Dataset):
    """The elements up to (not including) the first for which `predicate` is false."""

    def __init__(self, dataset, predicate):
        fn = TracedFunction(predicate, dataset._types, dataset._shapes, dataset._template,
                            "tf.data.experimental.take_while()")
        if (len(fn.outputs) != 1 or fn.output_types[0] is not dtypes.bool_
                or not fn.output_shapes[0].is_compatible_with([])):
            raise ValueError(f"`predicate` must return a scalar boolean tensor, got "
                             f"{fn.output_types} with shapes {fn.output_shapes}.")
        self._run = fn.runner()
        super().__init__([dataset], fn.captures, dataset._types, dataset._shapes,
                         dataset._template)

    def _iterate(self, ctx):
        for element in self._inputs[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            try:
                keep = as_bool(self._run(ctx, element)[0])
            except errors.OpError as err:
                yield ElementError(err)
                continue
            if not keep:
                return
            yield element


def take_while(predicate):
    """A transformation that ends the dataset at the first element failing `predicate`."""
    return lambda dataset: TakeWhileDataset(dataset, predicate)


def _acceptance(initial: np.ndarray, target: np.ndarray):
    """TF's mixing scheme: with probability `m` an element is taken as it comes, otherwise an
    element of class i is accepted with probability `a[i]`, so outputs follow `target`."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(initial > 0, target / initial, 0.0)
    top, low = ratio.max(), ratio.min()
    accept = (ratio - low) / (top - low) if top > low else np.ones_like(ratio)
    return accept, low


class RejectionResampleDataset(Dataset):
    def __init__(self, dataset, class_func, target_dist, initial_dist, seed):
        what = "tf.data.experimental.rejection_resample()"
        fn = TracedFunction(class_func, dataset._types, dataset._shapes, dataset._template, what)
        if (len(fn.outputs) != 1 or not fn.output_types[0].is_integer
                or not fn.output_shapes[0].is_compatible_with([])):
            raise ValueError(f"{what}: `class_func` must return a scalar integer tensor, got "
                             f"{fn.output_types} with shapes {fn.output_shapes}")
        self._class = fn.runner()
        self._target = _distribution(target_dist, "target_dist")
        self._initial = None if initial_dist is None else _distribution(initial_dist,
                                                                        "initial_dist")
        if self._initial is not None and self._initial.shape != self._target.shape:
            raise ValueError(f"{what}: initial_dist and target_dist must have the same shape, "
                             f"got {self._initial.shape} and {self._target.shape}")
        self._seeds = get_seed(seed)
        template = (fn.output_template, dataset._template)
        self._class_dtype = fn.output_types[0].as_numpy_dtype
        super().__init__([dataset], fn.captures, [fn.output_types[0]] + dataset._types,
                         [TensorShape([])] + dataset._shapes, _as_template(template))

    def _classify(self, ctx, element):
        value = int(np.asarray(self._class(ctx, element)[0]))
        if not 0 <= value < len(self._target):
            raise errors.InvalidArgumentError(
                None, None, f"rejection_resample(): class {value} is outside [0, "
                f"{len(self._target)})")
        return value

    def _estimates(self, ctx):
        """Per element of a private pass over the input: the estimated class distribution
        after it (counts with a uniform prior of 32 per class, as TF starts from); the last
        estimate repeats once that pass ends."""
        counts = np.full(len(self._target), 32.0)
        for element in self._inputs[0]._iterate(ctx):
            if type(element) is not ElementError:
                try:
                    counts[self._classify(ctx, element)] += 1
                except errors.OpError:
                    pass
            yield counts / counts.sum()
        while True:
            yield counts / counts.sum()

    def _iterate(self, ctx):
        seed, seed2 = self._seeds
        rng = np.random.default_rng(ctx.draw_seed() if seed is None else [seed, seed2])
        streams = [self._inputs[0]._iterate(ctx), self._inputs[0]._iterate(ctx)]
        live = [True, True]
        if self._initial is None:  # as in TF: one estimate per mixing draw, one per candidate
            for_mixing, for_accepting = self._estimates(ctx), self._estimates(ctx)
        else:
            fixed = _acceptance(self._initial, self._target)
        while any(live):
            mix = (fixed if self._initial is not None else
                   _acceptance(next(for_mixing), self._target))[1]
            choice = 0 if not live[1] or (live[0] and rng.random() < mix) else 1
            for element in streams[choice]:
                if type(element) is ElementError:
                    yield element
                    break
                accept = None
                if choice == 1:
                    accept = fixed[0] if self._initial is not None else \
                        _acceptance(next(for_accepting), self._target)[0]
                try:
                    label = self._classify(ctx, element)
                except errors.OpError as err:
                    yield ElementError(err)
                    break
                if choice == 0 or rng.random() < accept[label]:
                    yield (self._class_dtype(label),) + tuple(element)
                    break
            else:
                live[choice] = False


def _as_template(template):
    return (0, template[1])


def _distribution(value, name: str) -> np.ndarray:
    if isinstance(value, Tensor):
        folded = constant_value(value)
        if folded is None:
            raise ValueError(f"rejection_resample(): `{name}` must be constant, got "
                             f"'{value.name}'")
        value = folded
    dist = np.asarray(value, np.float64).reshape(-1)
    if dist.size == 0 or np.any(dist < 0) or not np.isclose(dist.sum(), 1.0, atol=1e-5):
        raise ValueError(f"rejection_resample(): `{name}` must be a probability vector, got "
                         f"{dist.tolist()}")
    return dist


def rejection_resample(class_func, target_dist, initial_dist=None, seed=None):
    """A transformation resampling a dataset so its classes follow `target_dist`.

    Elements become `(class, element)` pairs (the class as `class_func` returns it). As in TF, each
    output is taken directly from the input with probability `min(target/initial)`, otherwise
    from a second pass over the input that accepts class i with probability proportional to
    `target[i]/initial[i] - min`; without `initial_dist` it is estimated from the classes seen.

    Raises:
        ValueError: distributions that are not probability vectors (or not constant), or a
            `class_func` that does not return a scalar integer.
    """
    return lambda dataset: RejectionResampleDataset(dataset, class_func, target_dist,
                                                    initial_dist, seed)
