"""`tf.GradientTape` in graph mode: a thin front end over `tf.gradients`.

Contract: a graph already records every op, so the tape records nothing but the ops created
under `stop_recording()` (their outputs are constants for `gradient`) and what `watch` was
given. `gradient(target, sources)` is `tf.gradients` with the nested structure of `sources`
kept (with `watch_accessed_variables=False`, unwatched variables get None); a non-persistent
tape answers once. `jacobian` / `batch_jacobian` differentiate one
element (or column) at a time and need static sizes.
"""

from __future__ import annotations

import contextlib

from tensorflux.framework import graph as graph_mod
from tensorflux.framework import nest
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops.autodiff.gradients import gradients

__all__ = ["GradientTape"]


class GradientTape:
    """Computes gradients of what was computed in its context (TF 1.15 API, graph mode).

    Example:
        >>> with tf.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> dy_dx = tape.gradient(y, x)
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._watched: list = []
        self._stopped: list = []
        self._recording = False
        self._used = False

    def __enter__(self):
        self._recording = True
        return self

    def __exit__(self, *exc):
        self._recording = False
        return False

    def watch(self, tensor) -> None:
        """Marks `tensor` (or a nested structure of tensors/variables) as a source."""
        for item in nest.flatten(tensor):
            if item not in self._watched:
                self._watched.append(item)

    def watched_variables(self) -> tuple:
        return tuple(v for v in self._watched if hasattr(v, "initializer"))

    @contextlib.contextmanager
    def stop_recording(self):
        """Ops created in this context are constants for this tape's gradients.

        Raises:
            RuntimeError: the tape is not recording.
        """
        if not self._recording:
            raise RuntimeError("Trying to stop recording a tape which is not recording.")
        graph = graph_mod.get_default_graph()
        first = len(graph.get_operations())
        self._recording = False
        try:
            yield
        finally:
            self._recording = True
            for op in graph.get_operations()[first:]:
                self._stopped.extend(op.outputs)

    def reset(self) -> None:
        """Forgets what was watched (the graph itself is unchanged)."""
        self._watched = []
        self._stopped = []

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        """d(sum of `target`)/d`sources`, structured like `sources`.

        Raises:
            RuntimeError: a second call on a non-persistent tape.
        """

        if self._used and not self._persistent:
            raise RuntimeError("GradientTape.gradient can only be called once on non-persistent "
                               "tapes.")
        self._used = True
        flat_sources = nest.flatten(sources)
        flat_targets = nest.flatten(target)
        if output_gradients is not None:
            output_gradients = [None if g is None else convert_to_tensor(g)
                                for g in nest.flatten(output_gradients)]
        grads = gradients(flat_targets, flat_sources, grad_ys=output_gradients,
                          stop_gradients=self._stopped or None,
                          unconnected_gradients=unconnected_gradients)
        if not self._watch_accessed_variables:  # only watched variables are sources
            watched = {id(v) for v in self._watched}
            grads = [None if hasattr(s, "initializer") and id(s) not in watched else g
                     for s, g in zip(flat_sources, grads)]
        return nest.pack_sequence_as(sources, grads)

    def jacobian(self, target, sources, unconnected_gradients="none", parallel_iterations=None,
                 experimental_use_pfor=True):
        """d`target`[i...]/d`sources`[j...]: shape `target.shape + source.shape` per source.

        Raises:
            ValueError: `target` has no static number of elements.
        """

        del parallel_iterations, experimental_use_pfor
        if self._used and not self._persistent:
            raise RuntimeError("GradientTape.jacobian can only be called once on non-persistent "
                               "tapes.")
        self._used = True
        target = convert_to_tensor(target)
        size = target.shape.num_elements()
        if size is None:
            raise ValueError(f"jacobian needs a target with a static number of elements, got "
                             f"shape {target.shape}.")
        flat_sources = nest.flatten(sources)
        flat = array_ops.reshape(target, [-1])
        rows = [[] for _ in flat_sources]
        for i in range(size):
            grads = gradients(flat[i], flat_sources, stop_gradients=self._stopped or None,
                              unconnected_gradients=unconnected_gradients)
            for k, g in enumerate(grads):
                rows[k].append(_dense(g, flat_sources[k]))
        results = []
        for k, source in enumerate(flat_sources):
            source = convert_to_tensor(source)
            if any(r is None for r in rows[k]):
                results.append(None)
                continue
            stacked = array_ops.stack(rows[k]) if rows[k] else array_ops.zeros(
                [0] + source.shape.as_list(), source.dtype.base_dtype)
            results.append(array_ops.reshape(
                stacked, target.shape.as_list() + source.shape.as_list()
                if source.shape.is_fully_defined() else
                array_ops.concat([array_ops.shape(target), array_ops.shape(source)], 0)))
        return nest.pack_sequence_as(sources, results)

    def batch_jacobian(self, target, source, unconnected_gradients="none",
                       parallel_iterations=None, experimental_use_pfor=True):
        """d`target`[b, i...]/d`source`[b, j...] for rows independent along the batch
        dimension: shape `[batch] + target.shape[1:] + source.shape[1:]`.

        Raises:
            ValueError: the inner size of `target` is not static.
        """

        del parallel_iterations, experimental_use_pfor
        if self._used and not self._persistent:
            raise RuntimeError("GradientTape.batch_jacobian can only be called once on "
                               "non-persistent tapes.")
        self._used = True
        target = convert_to_tensor(target)
        source = convert_to_tensor(source)
        inner = target.shape[1:].num_elements() if target.shape.ndims else None
        if inner is None:
            raise ValueError(f"batch_jacobian needs a target of static shape beyond the batch "
                             f"dimension, got {target.shape}.")
        flat = array_ops.reshape(target, [-1, inner])
        columns = []
        for j in range(inner):
            (g,) = gradients(flat[:, j], [source], stop_gradients=self._stopped or None,
                             unconnected_gradients=unconnected_gradients)
            if g is None:
                return None
            columns.append(_dense(g, source))
        stacked = array_ops.stack(columns, axis=1)  # [batch, inner, source dims...]
        shape = array_ops.concat([array_ops.shape(target), array_ops.shape(source)[1:]], 0)
        return array_ops.reshape(stacked, shape)


def _dense(grad, source):
    if grad is None:
        return None
    if isinstance(grad, IndexedSlices):
        return convert_to_tensor(grad)
    return grad
