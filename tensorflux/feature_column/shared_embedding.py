"""`tf.feature_column.shared_embedding_columns`: one embedding table for several columns (TF1).

Each returned column embeds its own categorical column's ids, all through the variable that
the first of them to be built creates: `<scope>/<collection name>/embedding_weights`, where the
collection name defaults to the sorted column names joined by `_` plus `_shared_embedding`
(e.g. `input_layer/p_q_shared_embedding/embedding_weights`). The variable is kept in the graph
collection of that name, and the others find it there.
"""

import collections
import math

from tensorflux.feature_column.categorical import _CategoricalColumn, _DenseColumn
from tensorflux.feature_column.dense import _EmbeddingLookup
from tensorflux.feature_column.weighted import WeightedCategoricalColumn
from tensorflux.framework import graph as graph_lib
from tensorflux.ops.state import initializers as init_ops

__all__ = ["shared_embedding_columns"]


class SharedEmbeddingColumn(_EmbeddingLookup, _DenseColumn, collections.namedtuple(
        "SharedEmbeddingColumn", ["categorical_column", "dimension", "combiner", "initializer",
                                  "shared_embedding_collection_name", "max_norm",
                                  "trainable"])):
    """Combined embeddings of a categorical column's ids from a table shared with others."""

    @property
    def name(self):
        return f"{self.categorical_column.name}_shared_embedding"

    @property
    def _var_scope_name(self):
        return self.shared_embedding_collection_name

    def _embedding_weights(self, weight_collections, trainable):
        shape = (self.categorical_column._num_buckets, self.dimension)
        shared = graph_lib.get_collection(self.shared_embedding_collection_name)
        if shared:
            if len(shared) > 1:
                raise ValueError(f"Collection {self.shared_embedding_collection_name} can only "
                                 f"contain one variable. Suggested fix A: Choose a unique name "
                                 f"for this collection. Suggested fix B: Do not add any "
                                 f"variables to this collection. The feature_column library "
                                 f"already adds a variable under the hood.")
            weights = shared[0]
            if tuple(weights.shape.as_list()) != shape:
                raise ValueError(f"Shared embedding collection "
                                 f"{self.shared_embedding_collection_name} contains variable "
                                 f"{weights.name} of unexpected shape {weights.shape}. Expected "
                                 f"shape is {list(shape)}.")
            return weights
        weights = self._create_weights(weight_collections, trainable)
        graph_lib.add_to_collection(self.shared_embedding_collection_name, weights)
        return weights


def _unweighted(column):
    return column.categorical_column if isinstance(column, WeightedCategoricalColumn) else column


def shared_embedding_columns(categorical_columns, dimension, combiner="mean", initializer=None,
                             shared_embedding_collection_name=None, ckpt_to_load_from=None,
                             tensor_name_in_ckpt=None, max_norm=None, trainable=True):
    """Embedding columns (one per item of `categorical_columns`, in order) sharing one table.

    Args:
        categorical_columns: categorical columns of one type (weighted ones count as their
            source's type) and one bucket count.
        dimension: the embedding width.
        combiner: "mean", "sqrtn" or "sum".
        initializer: of the shared table (default: truncated normal, stddev 1/sqrt(dimension)).
        shared_embedding_collection_name: the graph collection (and variable scope) name of
            the table; default `<sorted names joined by _>_shared_embedding`.
        ckpt_to_load_from, tensor_name_in_ckpt: warm-starting, not supported here (restore
            with a `tf.train.Saver`).
        max_norm: clip embeddings to this l2 norm.
        trainable: whether the table is trainable.

    Raises:
        ValueError: dimension < 1, a bad initializer or combiner, columns of different types
            or bucket counts, an item that is not categorical, or a checkpoint argument.
    """
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or "
                         "none of them.")
    if ckpt_to_load_from is not None:
        raise ValueError(f"shared_embedding_columns: ckpt_to_load_from is not supported by "
                         f"tensorflux; restore {tensor_name_in_ckpt!r} with a tf.train.Saver.")
    if initializer is not None and not callable(initializer):
        raise ValueError("initializer must be callable if specified.")
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn', 'sum'. Given: {combiner}")
    columns = list(categorical_columns)
    if not columns:
        raise ValueError("categorical_columns must not be empty.")
    if initializer is None:
        initializer = init_ops.truncated_normal_initializer(mean=0.0,
                                                            stddev=1 / math.sqrt(dimension))
    ordered = sorted(columns, key=lambda c: getattr(c, "name", ""))
    for column in ordered:
        if not isinstance(column, _CategoricalColumn):
            raise ValueError(f"All categorical_columns must be subclasses of "
                             f"_CategoricalColumn. Given: {column}, of type: {type(column)}")
    first = _unweighted(ordered[0])
    for column in ordered[1:]:
        if type(_unweighted(column)) is not type(first):
            raise ValueError(f"To use shared_embedding_column, all categorical_columns must "
                             f"have the same type, or be weighted_categorical_column of the "
                             f"same type. Given column: {column} of type: "
                             f"{type(_unweighted(column))} does not match given column: "
                             f"{first} of type: {type(first)}")
        if column._num_buckets != ordered[0]._num_buckets:
            raise ValueError(f"To use shared_embedding_column, all categorical_columns must "
                             f"have the same number of buckets. Given column: {column} with "
                             f"buckets: {column._num_buckets} does not match column: "
                             f"{ordered[0]} with buckets: {ordered[0]._num_buckets}")
    if not shared_embedding_collection_name:
        shared_embedding_collection_name = "_".join(c.name for c in ordered) + "_shared_embedding"
    return [SharedEmbeddingColumn(c, int(dimension), combiner, initializer,
                                  shared_embedding_collection_name, max_norm, trainable)
            for c in columns]
