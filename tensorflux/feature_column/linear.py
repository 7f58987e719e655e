"""`tf.feature_column.linear_model`: the weighted sum of feature columns (TF1 semantics).

Each column gets a weight variable `<scope>/<column name>/weights` (zeros): a dense column of
width w a `[w, units]` matrix it is multiplied by, a categorical column (bucketized included)
a `[num_buckets, units]` table whose rows of the example's ids are combined by
`sparse_combiner` ("sum" by default, as in TF1). A bias `<scope>/bias_weights` of shape
`[units]` is added. The scope is `linear_model` (uniquified).
"""

from __future__ import annotations

from tensorflux.feature_column.categorical import _CategoricalColumn, _DenseColumn, _LazyBuilder
from tensorflux.framework import dtypes
from tensorflux.framework.graph import GraphKeys
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array.concat_split import stack
from tensorflux.ops.math import matrix_product as matmul_ops
from tensorflux.ops.nn import embedding as embedding_sparse
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_scope

__all__ = ["linear_model"]


def _weight_collections(weight_collections):
    if not weight_collections:
        return None
    collections = list(weight_collections)
    if GraphKeys.GLOBAL_VARIABLES not in collections:
        collections.append(GraphKeys.GLOBAL_VARIABLES)
    return collections


def linear_model(features, feature_columns, units=1, sparse_combiner="sum",
                 weight_collections=None, trainable=True, cols_to_vars=None):
    """A float32 `[batch, units]` tensor: the sum over columns of input times weights, plus
    a bias.

    Args:
        features: {key: Tensor or SparseTensor}.
        feature_columns: dense and/or categorical columns.
        units: the output width.
        sparse_combiner: "sum", "mean" or "sqrtn": how the weights of one example's ids in a
            categorical column are combined.
        weight_collections: extra collections the variables are added to.
        trainable: whether the variables are trainable.
        cols_to_vars: if a dict, filled with {column: [variables]} (and 'bias': [bias]).

    Raises:
        ValueError: no columns, an item that is not a feature column, an unknown combiner,
            features not a dict, or duplicate column names.
    """
    if isinstance(feature_columns, (_DenseColumn, _CategoricalColumn)):
        feature_columns = [feature_columns]
    feature_columns = list(feature_columns or [])
    if not feature_columns:
        raise ValueError("feature_columns must not be empty.")
    for column in feature_columns:
        if not isinstance(column, (_DenseColumn, _CategoricalColumn)):
            raise ValueError(f"Items of feature_columns must be a _FeatureColumn. Given "
                             f"(type {type(column)}): {column}.")
        if getattr(column, "_is_sequence", False):
            raise ValueError(f"linear_model does not support sequence columns. Given: "
                             f"{column.name}")
    if sparse_combiner not in ("sum", "mean", "sqrtn"):
        raise ValueError(f"sparse_combiner must be one of 'sum', 'mean', 'sqrtn'. Given: "
                         f"{sparse_combiner}")
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of Tensors. Given type: "
                         f"{type(features)}")
    names = [c.name for c in feature_columns]
    if len(set(names)) != len(names):
        raise ValueError(f"Duplicate feature column names in linear_model: {sorted(names)}")
    collections = _weight_collections(weight_collections)
    with variable_scope.variable_scope(None, default_name="linear_model"):
        builder = _LazyBuilder(features)
        terms = []
        for column in sorted(feature_columns, key=lambda c: c.name):
            scope_name = getattr(column, "_var_scope_name", column.name)
            with variable_scope.variable_scope(None, default_name=scope_name):
                if isinstance(column, _CategoricalColumn):
                    weights = variable_scope.get_variable(
                        "weights", shape=(column._num_buckets, units), dtype=dtypes.float32,
                        initializer=init_ops.zeros_initializer(), trainable=trainable,
                        collections=collections)
                    pair = column._get_sparse_tensors(builder)
                    term = embedding_sparse.safe_embedding_lookup_sparse(
                        weights, pair.id_tensor, sparse_weights=pair.weight_tensor,
                        combiner=sparse_combiner, name="weighted_sum")
                else:
                    width = column._variable_shape.num_elements()
                    weights = variable_scope.get_variable(
                        "weights", shape=(width, units), dtype=dtypes.float32,
                        initializer=init_ops.zeros_initializer(), trainable=trainable,
                        collections=collections)
                    tensor = column._get_dense_tensor(builder)
                    tensor = shape_ops.reshape(tensor, stack([shape_ops.shape(tensor)[0],
                                                              width]))
                    term = matmul_ops.matmul(tensor, weights, name="weighted_sum")
                terms.append(shape_ops.reshape(term, [-1, units]))
                if cols_to_vars is not None:
                    cols_to_vars[column] = [weights]
        bias = variable_scope.get_variable(
            "bias_weights", shape=(units,), dtype=dtypes.float32,
            initializer=init_ops.zeros_initializer(), trainable=trainable,
            collections=collections)
        if cols_to_vars is not None:
            cols_to_vars["bias"] = [bias]
        total = terms[0] if len(terms) == 1 else math_ops.add_n(terms)
        return total + bias
