"""`tf.data.Options` and its nested option groups (TF 1.15 fields).

Options are accepted and merged as in TF (`Dataset.with_options`, `Dataset.options()`); none of
them changes the elements produced here (the pipeline runs on demand in the consuming step, so
optimizations, threading and stats options have nothing to act on).
"""

from __future__ import annotations

from tensorflux.data.dataset_ops import Dataset

__all__ = ["OptionsDataset", "Options", "OptimizationOptions", "MapVectorizationOptions",
           "ThreadingOptions", "StatsOptions", "DistributeOptions"]


class _OptionsBase:
    """Named, typed, initially unset (None) options; unknown names are an AttributeError."""

    _FIELDS: dict = {}  # name -> type (or tuple of types)

    def __init__(self):
        for name, kind in self._FIELDS.items():
            object.__setattr__(self, name, kind() if _is_group(kind) else None)

    def __setattr__(self, name, value):
        if name not in self._FIELDS:
            raise AttributeError(f"Cannot set the property {name} on {type(self).__name__}.")
        kind = self._FIELDS[name]
        if value is not None and not isinstance(value, kind):
            raise TypeError(f"Property \"{name}\" must be of type {_kind_name(kind)}, got: "
                            f"{value!r} (type: {type(value).__name__}).")
        object.__setattr__(self, name, value)

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self._FIELDS)

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __repr__(self):
        set_fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._FIELDS
                               if getattr(self, n) not in (None,) and
                               not (_is_group(self._FIELDS[n]) and
                                    getattr(self, n) == self._FIELDS[n]()))
        return f"{type(self).__name__}({set_fields})"

    def _merge(self, other):
        merged = type(self)()
        for name, kind in self._FIELDS.items():
            mine, theirs = getattr(self, name), getattr(other, name)
            if _is_group(kind):
                value = mine._merge(theirs)
            elif mine is None:
                value = theirs
            elif theirs is None or mine == theirs:
                value = mine
            else:
                raise ValueError(f"Cannot merge incompatible values ({mine!r} and {theirs!r}) "
                                 f"of option: {name}")
            object.__setattr__(merged, name, value)
        return merged


def _is_group(kind) -> bool:
    return isinstance(kind, type) and issubclass(kind, _OptionsBase)


def _kind_name(kind) -> str:
    if isinstance(kind, tuple):
        return " or ".join(k.__name__ for k in kind)
    return kind.__name__


class MapVectorizationOptions(_OptionsBase):
    """Options of the map vectorization optimization (`enabled`, `use_choose_fastest`)."""

    _FIELDS = {"enabled": bool, "use_choose_fastest": bool}


class OptimizationOptions(_OptionsBase):
    """Static optimizations of the input pipeline (accepted; no effect here)."""

    _FIELDS = {"apply_default_optimizations": bool, "autotune": bool,
               "autotune_algorithm": object, "autotune_buffers": bool,
               "autotune_cpu_budget": int, "autotune_ram_budget": int,
               "filter_fusion": bool, "filter_with_random_uniform_fusion": bool,
               "hoist_random_uniform": bool, "map_and_batch_fusion": bool,
               "map_and_filter_fusion": bool, "map_fusion": bool, "map_parallelization": bool,
               "map_vectorization": MapVectorizationOptions, "noop_elimination": bool,
               "parallel_batch": bool, "shuffle_and_repeat_fusion": bool}


class ThreadingOptions(_OptionsBase):
    """Threading of the input pipeline (`max_intra_op_parallelism`, `private_threadpool_size`)."""

    _FIELDS = {"max_intra_op_parallelism": int, "private_threadpool_size": int}


class StatsOptions(_OptionsBase):
    """Statistics collection (`aggregator`, `prefix`, `counter_prefix`, `latency_all_edges`)."""

    _FIELDS = {"aggregator": object, "prefix": str, "counter_prefix": str,
               "latency_all_edges": bool}


class DistributeOptions(_OptionsBase):
    """Distribution of the input pipeline (`auto_shard`, `num_devices`)."""

    _FIELDS = {"auto_shard": bool, "num_devices": int}


class Options(_OptionsBase):
    """Options of a dataset (TF 1.15 `tf.data.Options`).

    Example:
        >>> options = tf.data.Options()
        >>> options.experimental_optimization.map_fusion = True
        >>> dataset = dataset.with_options(options)
    """

    _FIELDS = {"experimental_deterministic": bool, "experimental_distribute": DistributeOptions,
               "experimental_optimization": OptimizationOptions,
               "experimental_slack": bool, "experimental_stats": StatsOptions,
               "experimental_threading": ThreadingOptions,
               "experimental_external_state_policy": object}

    def merge(self, options):
        """These options merged with `options` (an `Options`): a field set in one is taken; a
        field set in both must agree.

        Raises:
            TypeError: `options` is not an Options.
            ValueError: a field set to different values in the two.
        """
        if not isinstance(options, Options):
            raise TypeError(f"Options.merge() expects tf.data.Options, got {options!r}")
        return self._merge(options)


class OptionsDataset(Dataset):
    """The elements of its input, carrying options (`Dataset.with_options`)."""

    _keeps_cardinality = True

    def __init__(self, dataset, options):
        if not isinstance(options, Options):
            raise TypeError(f"Dataset.with_options() expects tf.data.Options, got {options!r}")
        dataset.options().merge(options)  # conflicting values fail here, as in TF
        self._own_options = options
        super().__init__([dataset], [], dataset._types, dataset._shapes, dataset._template)

    def _iterate(self, ctx):
        return self._inputs[0]._iterate(ctx)
