"""`tf.contrib.factorization.KMeans`: the k-means graph of TF 1.15's contrib (clustering ops).

`training_graph()` returns `(all_scores, cluster_idx, scores, cluster_centers_initialized,
init_op, training_op)`, one list entry per input tensor:
- all_scores[i]: [n, k] distances of each point to each center: squared Euclidean
  (`|x|^2 - 2 x.c + |c|^2`) or cosine (`1 - x.c` of L2-normalized vectors);
- cluster_idx[i]: [n] int64 index of the nearest center; scores[i]: its distance;
- init_op: picks the initial centers once (a no-op after that): given centers (array, tensor or
  `f(inputs, k)`) or `num_clusters` distinct random rows of the first input;
- training_op: full batch: each center becomes the mean of its points (a center without points
  becomes 0, as the 1e-6 guard makes it in TF); mini-batch: each center moves to the running mean
  of every point it was ever assigned, its count starting at 1 (the initial center).
With the cosine distance the inputs are L2-normalized, and full-batch centers too.
Not provided: "kmeans_plus_plus" and "kmc2" initialization, mini_batch_steps_per_iteration > 1.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors, scopes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.debug import logging as logging_ops
from tensorflux.ops.nn import functions as nn_impl
from tensorflux.ops.random import stateful as random_ops
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.ops.state import variable_scope as vs
from tensorflux.ops.state.initializers import zeros_initializer

__all__ = ["COSINE_DISTANCE", "KMC2_INIT", "KMEANS_PLUS_PLUS_INIT", "KMeans", "RANDOM_INIT",
           "SQUARED_EUCLIDEAN_DISTANCE"]

SQUARED_EUCLIDEAN_DISTANCE = "squared_euclidean"
COSINE_DISTANCE = "cosine"
RANDOM_INIT = "random"
KMEANS_PLUS_PLUS_INIT = "kmeans_plus_plus"
KMC2_INIT = "kmc2"

CLUSTERS_VAR_NAME = "clusters"


class KMeans:
    """Creates the graph for k-means clustering (TF 1.15's contrib.factorization.KMeans).

    Args:
        inputs: a [n, d] tensor or a list of them.
        num_clusters: int (ignored when `initial_clusters` gives the centers).
        initial_clusters: "random", a [k, d] array or tensor, or `f(inputs, k)`.
        distance_metric: "squared_euclidean" or "cosine".
        use_mini_batch: mini-batch updates (running means) instead of full-batch means.
        mini_batch_steps_per_iteration: only 1 is supported.
        random_seed: seed of the random initialization.
        kmeans_plus_plus_num_retries, kmc2_chain_length: accepted for TF's signature.

    Raises:
        ValueError: an unknown distance metric or initialization name.
        UnimplementedError: "kmeans_plus_plus" / "kmc2" initialization, or
            mini_batch_steps_per_iteration > 1.
    """

    def __init__(self, inputs, num_clusters, initial_clusters=RANDOM_INIT,
                 distance_metric=SQUARED_EUCLIDEAN_DISTANCE, use_mini_batch=False,
                 mini_batch_steps_per_iteration=1, random_seed=0,
                 kmeans_plus_plus_num_retries=2, kmc2_chain_length=200):
        if distance_metric not in (SQUARED_EUCLIDEAN_DISTANCE, COSINE_DISTANCE):
            raise ValueError(f"Unsupported distance metric {distance_metric!r}")
        if isinstance(initial_clusters, str):
            if initial_clusters in (KMEANS_PLUS_PLUS_INIT, KMC2_INIT):
                raise errors.UnimplementedError(
                    None, None, f"KMeans: initial_clusters={initial_clusters!r} is not "
                    "supported by tensorflux; use 'random' or give the initial centers")
            if initial_clusters != RANDOM_INIT:
                raise ValueError(f"Unsupported initialization {initial_clusters!r}")
        if use_mini_batch and int(mini_batch_steps_per_iteration) != 1:
            raise errors.UnimplementedError(
                None, None, "KMeans: mini_batch_steps_per_iteration > 1 is not supported by "
                "tensorflux")
        self._inputs = [convert_to_tensor(i) for i in
                        (inputs if isinstance(inputs, (list, tuple)) else [inputs])]
        self._num_clusters = num_clusters
        self._initial_clusters = initial_clusters
        self._distance_metric = distance_metric
        self._use_mini_batch = bool(use_mini_batch)
        self._random_seed = random_seed

    def _cosine(self) -> bool:
        return self._distance_metric == COSINE_DISTANCE

    def _distances(self, x, centers):
        """[n, k] distances of the rows of `x` to `centers` (already normalized for cosine)."""
        cross = math_ops.matmul(x, centers, transpose_b=True)
        if self._cosine():
            return 1.0 - cross
        x2 = math_ops.reduce_sum(math_ops.square(x), 1, keepdims=True)
        c2 = array_ops.reshape(math_ops.reduce_sum(math_ops.square(centers), 1), [1, -1])
        return math_ops.maximum(x2 - 2.0 * cross + c2, 0.0)

    def _initial_centers(self, first, k):
        given = self._initial_clusters
        if callable(given):
            return convert_to_tensor(given(self._inputs, k), dtype=first.dtype)
        if not isinstance(given, str):
            return convert_to_tensor(given, dtype=first.dtype)
        rows = array_ops.shape(first, out_type=dtypes.int64)[0]
        check = logging_ops.Assert(
            rows >= k, ["KMeans: random initialization needs at least num_clusters points in "
                        "the first batch, got", rows])
        with scopes.control_dependencies([check]):
            order = random_ops.random_shuffle(math_ops.range(rows), seed=self._random_seed)
        return array_ops.gather(first, order[:k])

    def training_graph(self):
        """Builds the clustering graph; see the module docstring for what it returns."""
        inputs = self._inputs
        if self._cosine():
            inputs = [nn_impl.l2_normalize(x, 1) for x in inputs]
        first = inputs[0]
        given = self._initial_clusters
        if not isinstance(given, str) and not callable(given):
            k = int(convert_to_tensor(given).get_shape()[0])
        else:
            k = int(self._num_clusters)
        dim = first.get_shape()[1]
        shape = [k, int(dim)] if dim is not None else None
        with vs.variable_scope(None, "kmeans"):
            if shape is not None:
                centers = vs.get_variable(CLUSTERS_VAR_NAME, shape=shape,
                                          dtype=first.dtype.base_dtype,
                                          initializer=zeros_initializer(), trainable=False)
            else:
                centers = vs.get_variable(CLUSTERS_VAR_NAME, dtype=first.dtype.base_dtype,
                                          initializer=np.zeros([0, 0], np.float32),
                                          trainable=False, validate_shape=False)
            initialized = vs.get_variable("initialized", dtype=dtypes.bool_,
                                          initializer=False, trainable=False)
            counts = (vs.get_variable("cluster_counts", dtype=dtypes.int64,
                                      initializer=np.ones([k], np.int64), trainable=False)
                      if self._use_mini_batch else None)

        def _set_centers():
            start = self._initial_centers(first, k)
            if self._cosine():
                start = nn_impl.l2_normalize(start, 1)
            done = state_ops.assign(centers, start, validate_shape=shape is not None)
            with scopes.control_dependencies([done]):
                return state_ops.assign(initialized, True)

        init_op = control_flow_ops.cond(initialized, lambda: array_ops.identity(initialized),
                                        _set_centers).op
        current = centers.value()
        if self._cosine() and self._use_mini_batch:
            current = nn_impl.l2_normalize(current, 1)
        all_scores, cluster_idx, scores = [], [], []
        for x in inputs:
            d = self._distances(x, current)
            all_scores.append(d)
            cluster_idx.append(math_ops.argmin(d, 1, output_type=dtypes.int64))
            scores.append(math_ops.reduce_min(d, 1))
        if self._use_mini_batch:
            training_op = self._mini_batch_op(inputs, cluster_idx, centers, counts)
        else:
            training_op = self._full_batch_op(inputs, cluster_idx, centers, k)
        return all_scores, cluster_idx, scores, initialized, init_op, training_op

    def _mini_batch_op(self, inputs, cluster_idx, centers, counts):
        updates = []
        for x, idx in zip(inputs, cluster_idx):
            ids, pos = array_ops.unique(idx)
            n = array_ops.size(ids)
            sums = math_ops.unsorted_segment_sum(x, pos, n)
            added = math_ops.unsorted_segment_sum(array_ops.ones_like(pos, dtype=dtypes.int64),
                                                  pos, n)
            old = array_ops.gather(centers, ids)
            total = array_ops.gather(counts, ids) + added
            added_f = array_ops.reshape(math_ops.cast(added, x.dtype), [-1, 1])
            total_f = array_ops.reshape(math_ops.cast(total, x.dtype), [-1, 1])
            delta = (sums - added_f * old) / total_f
            updates.append(state_ops.scatter_add(centers, ids, delta))
            updates.append(state_ops.scatter_add(counts, ids, added))
        return control_flow_ops.group(*updates)

    def _full_batch_op(self, inputs, cluster_idx, centers, k):
        sums = math_ops.add_n([math_ops.unsorted_segment_sum(x, i, k)
                               for x, i in zip(inputs, cluster_idx)])
        counts = math_ops.add_n([
            math_ops.unsorted_segment_sum(array_ops.ones_like(i, dtype=x.dtype), i, k)
            for x, i in zip(inputs, cluster_idx)])
        new = sums / (array_ops.reshape(counts, [-1, 1]) + 1e-6)
        if self._cosine():
            new = nn_impl.l2_normalize(new, 1)
        return state_ops.assign(centers, new)
