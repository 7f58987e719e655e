"""Dense wrappers of categorical columns and `input_layer` (`tf.feature_column`, TF1)."""

import collections
import contextlib
import math

from tensorflux.feature_column.categorical import _CategoricalColumn, _DenseColumn, _LazyBuilder
from tensorflux.framework import dtypes, tensor_shape
from tensorflux.framework import graph as graph_lib
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import embedding as embedding_ops
from tensorflux.ops.sparse import core as sparse_core
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_scope

__all__ = ["embedding_column", "indicator_column", "input_layer", "make_parse_example_spec"]


class IndicatorColumn(_DenseColumn, collections.namedtuple("IndicatorColumn",
                                                           ["categorical_column"])):
    """Multi-hot float `[batch, num_buckets]`: the count of each id in the example (the sum
    of its weights for a weighted column)."""

    @property
    def name(self):
        return f"{self.categorical_column.name}_indicator"

    @property
    def _variable_shape(self):
        return tensor_shape.TensorShape([self.categorical_column._num_buckets])

    @property
    def _parse_example_spec(self):
        return self.categorical_column._parse_example_spec

    def _transform_feature(self, builder):
        pair = self.categorical_column._get_sparse_tensors(builder)
        dense_ids = sparse_core.sparse_tensor_to_dense(pair.id_tensor, default_value=-1)
        one_hot = array_ops.one_hot(dense_ids, self.categorical_column._num_buckets, 1.0, 0.0,
                                    dtype=dtypes.float32)
        if pair.weight_tensor is not None:  # a weighted column: the weights summed per id
            weights = sparse_core.sparse_tensor_to_dense(pair.weight_tensor, default_value=0.0)
            one_hot = one_hot * array_ops.expand_dims(math_ops.cast(weights, dtypes.float32), -1)
        return math_ops.reduce_sum(one_hot, axis=-2)

    def _get_dense_tensor(self, builder, weight_collections=None, trainable=None):
        return builder.get(self)


def indicator_column(categorical_column):
    """Represents `categorical_column` as a multi-hot dense vector of its bucket counts.

    Raises:
        ValueError: `categorical_column` is not a categorical column.
    """
    if not isinstance(categorical_column, _CategoricalColumn):
        raise ValueError(f"categorical_column must be a categorical column. "
                         f"Given: {categorical_column}")
    return IndicatorColumn(categorical_column)


class _EmbeddingLookup:
    """What an embedding column (own or shared table) does beside finding its table: the
    categorical column's ids in, one `[dimension]` row out, combined by `combiner`."""

    @property
    def _variable_shape(self):
        return tensor_shape.TensorShape([self.dimension])

    @property
    def _parse_example_spec(self):
        return self.categorical_column._parse_example_spec

    def _transform_feature(self, builder):
        return self.categorical_column._get_sparse_tensors(builder)

    def _create_weights(self, weight_collections, trainable):
        """The float32 `embedding_weights` variable `[num_buckets, dimension]` in the current
        scope (also in GLOBAL_VARIABLES when other collections are given)."""
        collections_ = None
        if weight_collections:
            collections_ = list(weight_collections)
            if graph_lib.GraphKeys.GLOBAL_VARIABLES not in collections_:
                collections_.append(graph_lib.GraphKeys.GLOBAL_VARIABLES)
        return variable_scope.get_variable(
            "embedding_weights", shape=(self.categorical_column._num_buckets, self.dimension),
            dtype=dtypes.float32, initializer=self.initializer,
            trainable=bool(self.trainable and (trainable is None or trainable)),
            collections=collections_)

    def _embedding_weights(self, weight_collections, trainable):
        return self._create_weights(weight_collections, trainable)

    def _get_dense_tensor(self, builder, weight_collections=None, trainable=None):
        pair = builder.get(self)
        weights = self._embedding_weights(weight_collections, trainable)
        return embedding_ops.safe_embedding_lookup_sparse(
            weights, pair.id_tensor, sparse_weights=pair.weight_tensor, combiner=self.combiner,
            name=f"{self.name}_weights", max_norm=self.max_norm)


class EmbeddingColumn(_EmbeddingLookup, _DenseColumn, collections.namedtuple(
        "EmbeddingColumn", ["categorical_column", "dimension", "combiner", "initializer",
                            "max_norm", "trainable"])):
    """Combined embeddings of a categorical column's ids, from variable `embedding_weights`."""

    @property
    def name(self):
        return f"{self.categorical_column.name}_embedding"


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None,
                     ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                     trainable=True):
    """Dense `[batch, dimension]` embedding of `categorical_column`'s ids.

    The table is the variable `<scope>/<categorical name>_embedding/embedding_weights` of shape
    `[num_buckets, dimension]`, created on first use (inside `input_layer` the scope is
    `input_layer`). `combiner` ("mean", "sum" or "sqrtn") reduces the ids of one example;
    an example without ids gives zeros. `initializer` defaults to a truncated normal with
    stddev `1/sqrt(dimension)`.

    Raises:
        ValueError: dimension < 1, non-callable initializer, unknown combiner, only one of
            ckpt_to_load_from/tensor_name_in_ckpt given, or (checkpoint warm-starting is not
            supported here) either of them given.
    """
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if not isinstance(categorical_column, _CategoricalColumn):
        raise ValueError(f"categorical_column must be a categorical column. "
                         f"Given: {categorical_column}")
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn', 'sum'. Given: {combiner}")
    if initializer is not None and not callable(initializer):
        raise ValueError(f"initializer must be callable if specified. Embedding of column_name: "
                         f"{categorical_column.name}")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or "
                         "none of them.")
    if ckpt_to_load_from is not None:
        raise ValueError(f"embedding_column: ckpt_to_load_from is not supported by tensorflux; "
                         f"restore {tensor_name_in_ckpt!r} with a tf.train.Saver instead.")
    if initializer is None:
        initializer = init_ops.truncated_normal_initializer(mean=0.0,
                                                            stddev=1 / math.sqrt(dimension))
    return EmbeddingColumn(categorical_column, int(dimension), combiner, initializer, max_norm,
                           trainable)


def input_layer(features, feature_columns, weight_collections=None, trainable=True,
                cols_to_vars=None, cols_to_output_tensors=None):
    """Concatenates the dense columns into one float32 `[batch, sum of widths]` tensor.

    See `dense_input` (built under variable scope `input_layer`)."""
    return dense_input(features, feature_columns, "input_layer", weight_collections,
                       trainable, cols_to_vars, cols_to_output_tensors)


def dense_input(features, feature_columns, scope_name, weight_collections=None, trainable=True,
                cols_to_vars=None, cols_to_output_tensors=None):
    """Concatenates the dense columns into one float32 `[batch, sum of widths]` tensor, built
    under a new variable scope `scope_name` (None: in the current scope, which
    `tf.keras.layers.DenseFeatures` opens itself and re-enters with reuse).

    Columns are laid out in order of `column.name`; each is built under variable scope
    `input_layer/<column name>` (so embedding tables are `input_layer/<col>_embedding/
    embedding_weights`). `features` maps keys to Tensors or SparseTensors, e.g. the dict of
    placeholders you feed or the dict a `tf.data` iterator yields.

    Raises:
        ValueError: no columns, a column that is not dense, a missing feature key, or
            static batch sizes that disagree.
    """
    if isinstance(feature_columns, (_DenseColumn, _CategoricalColumn)) or not hasattr(
            feature_columns, "__iter__"):
        feature_columns = [feature_columns]
    feature_columns = list(feature_columns)
    if not feature_columns:
        raise ValueError("feature_columns must not be empty.")
    for column in feature_columns:
        if not isinstance(column, _DenseColumn):
            raise ValueError(f"Items of feature_columns must be a _DenseColumn. You can wrap a "
                             f"categorical column with an embedding_column or indicator_column. "
                             f"Given: {column}")
        if getattr(column, "_is_sequence", False) or getattr(
                getattr(column, "categorical_column", None), "_is_sequence", False):
            raise ValueError(f"In {type(column).__name__}: {column.name}. categorical_column "
                             f"must not be a sequence column. Suggested fix A: If you wish to "
                             f"use input_layer, use a non-sequence categorical_column_with_*. "
                             f"Suggested fix B: If you wish to create sequence input, use "
                             f"sequence_input_layer instead of input_layer.")
    names = [c.name for c in feature_columns]
    if len(set(names)) != len(names):
        raise ValueError(f"Duplicate feature column names in input_layer: {sorted(names)}")
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of Tensors. Given type: "
                         f"{type(features)}")
    outer = variable_scope.variable_scope(None, default_name=scope_name) if scope_name \
        else contextlib.nullcontext()
    with outer:
        builder = _LazyBuilder(features)
        outputs, batch_sizes = [], []
        for column in sorted(feature_columns, key=lambda c: c.name):
            column_scope = getattr(column, "_var_scope_name", column.name)
            with variable_scope.variable_scope(column_scope) as scope:
                tensor = column._get_dense_tensor(builder, weight_collections=weight_collections,
                                                  trainable=trainable)
                width = column._variable_shape.num_elements()
                output = array_ops.reshape(tensor,
                                           array_ops.stack([array_ops.shape(tensor)[0], width]))
                batch_sizes.append((column.name, tensor.shape[0] if tensor.shape.ndims else None))
                outputs.append(output)
                if cols_to_vars is not None:
                    cols_to_vars[column] = graph_lib.get_collection(
                        graph_lib.GraphKeys.GLOBAL_VARIABLES, scope=scope.name + "/")
                if cols_to_output_tensors is not None:
                    cols_to_output_tensors[column] = output
        static = {(n, int(b)) for n, b in batch_sizes if b is not None and
                  getattr(b, "value", b) is not None}
        if len({b for _, b in static}) > 1:
            raise ValueError(f"Batch size (first dimension) of each feature must be same. "
                             f"Batch size of columns {sorted(static)}")
        return array_ops.concat(outputs, 1)


def make_parse_example_spec(feature_columns):
    """The `tf.parse_example` features dict every column in `feature_columns` reads.

    Numeric columns give `FixedLenFeature(shape, dtype, default_value)`, categorical columns
    `VarLenFeature(dtype)`; derived columns give their source's spec.

    Raises:
        ValueError: an item is not a feature column, or two columns want different specs for
            the same key.
    """
    result = {}
    for column in feature_columns:
        if not isinstance(column, (_DenseColumn, _CategoricalColumn)):
            raise ValueError(f"All feature_columns must be _FeatureColumn instances. "
                             f"Given: {column}")
        for key, spec in column._parse_example_spec.items():
            if key in result and result[key] != spec:
                raise ValueError(f"feature_columns contain different parse_spec for key {key}. "
                                 f"Given {spec} and {result[key]}")
            result[key] = spec
    return result
