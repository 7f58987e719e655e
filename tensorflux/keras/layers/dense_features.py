"""`tf.keras.layers.DenseFeatures`: feature columns as the first layer of a Keras model.

The layer takes a dict of feature tensors (the placeholders Keras makes from a dict of arrays,
or a `tf.data` element's features) and returns the `[batch, sum of widths]` tensor of its dense
columns, as `tf.feature_column.input_layer` does, under its own variable scope
(`dense_features/<column>/...`). The columns' variables (embedding tables) are its weights.
"""

from __future__ import annotations

from tensorflux.feature_column import dense as dense_columns
from tensorflux.feature_column import sequence as sequence_columns
from tensorflux.framework import graph as graph_mod
from tensorflux.keras.engine.base_layer import Layer
from tensorflux.ops.state import variable_scope

__all__ = ["DenseFeatures", "SequenceFeatures"]


class _FeatureColumnsLayer(Layer):
    """A layer over feature columns: a dict of features in, the columns built under the
    layer's own variable scope on the first call and re-entered with reuse after; the
    variables the first call creates become the layer's weights."""

    def __init__(self, feature_columns, trainable=True, name=None, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        columns = list(feature_columns) if hasattr(feature_columns, "__iter__") and \
            not hasattr(feature_columns, "_fields") else [feature_columns]
        if not columns:
            raise ValueError("feature_columns must not be empty.")
        self._feature_columns = columns
        self._scope = None

    @property
    def feature_columns(self):
        return list(self._feature_columns)

    def build(self, input_shape):
        self.built = True

    def _in_scope(self, features, build):
        """`build()` inside the layer's variable scope, tracking the variables it creates."""
        if not isinstance(features, dict):
            raise ValueError(f"We expected a dictionary here. Instead we got: {features!r}")
        if self._scope is not None:
            with variable_scope.variable_scope(self._scope, reuse=True):
                return build()
        graph = graph_mod.get_default_graph()
        before = set(graph.get_collection(graph_mod.GraphKeys.GLOBAL_VARIABLES))
        with variable_scope.variable_scope(None, default_name=self.name) as scope:
            self._scope = scope
            output = build()
        for var in graph.get_collection(graph_mod.GraphKeys.GLOBAL_VARIABLES):
            if var not in before:
                (self._trainable_weights if var.trainable
                 else self._non_trainable_weights).append(var)
        return output

    def get_config(self):
        config = super().get_config()
        config["feature_columns"] = [repr(c) for c in self._feature_columns]
        return config


class DenseFeatures(_FeatureColumnsLayer):
    """A layer producing a dense tensor from a dict of features and dense feature columns.

    Raises:
        ValueError: no columns, or a column that is not dense (as `input_layer`).
    """

    def call(self, features, cols_to_output_tensors=None):
        return self._in_scope(features, lambda: dense_columns.dense_input(
            features, self._feature_columns, None, trainable=self.trainable,
            cols_to_output_tensors=cols_to_output_tensors))

    def compute_output_shape(self, input_shape):
        width = sum(c._variable_shape.num_elements() for c in self._feature_columns)
        batch = next(iter(input_shape.values()))[0] if isinstance(input_shape, dict) else None
        return (batch, width)


class SequenceFeatures(_FeatureColumnsLayer):
    """Sequence feature columns as a Keras layer (`tf.keras.experimental.SequenceFeatures`):
    a dict of sequence features -> `(input [batch, T, sum of widths], sequence_length
    [batch])`, as `tf.contrib.feature_column.sequence_input_layer`, under the layer's own
    variable scope; the columns' variables are its weights.

    Raises:
        ValueError: no columns, or a column that is not a sequence column.
    """

    def call(self, features):
        return self._in_scope(features, lambda: sequence_columns.sequence_input(
            features, self._feature_columns, None, trainable=self.trainable))
