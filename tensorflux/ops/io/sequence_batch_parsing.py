"""`tf.io.parse_sequence_example`: a batch of `tf.train.SequenceExample`s (TensorFlow's
`ParseSequenceExample` op).

Each record parses like `parse_single_sequence_example`; the batch then stacks:

* context features as in `parse_example` (dense [batch] + shape, sparse [batch, position]);
* a `FixedLenSequenceFeature` list as a dense [batch, T_max] + shape tensor, shorter examples
  padded with zeros (empty strings), plus its per-example step count in `feature_list_lengths`;
* a `VarLenFeature` list as a SparseTensor with [example, step, position] indices and dense
  shape [batch, longest list, longest step].
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.lib.formats import example_parser
from tensorflux.ops.io.parsing import _default_tensor
from tensorflux.ops.io.sequence_parsing import (
    decode_sequence_example,
    feature_params,
    outputs_by_key,
    parse_feature_lists,
)

__all__ = ["parse_sequence_example"]

_TYPES = "list(type) >= 0 = []"
_KEYS = "list(string) >= 0 = []"

ParseSequenceExample = define_op(
    "ParseSequenceExample",
    inputs=["serialized: string", "debug_name: string", "context_dense_defaults: Tcontext_dense"],
    outputs=["context_sparse_indices: Ncontext_sparse * int64",
             "context_sparse_values: context_sparse_types",
             "context_sparse_shapes: Ncontext_sparse * int64",
             "context_dense_values: Tcontext_dense",
             "feature_list_sparse_indices: Nfeature_list_sparse * int64",
             "feature_list_sparse_values: feature_list_sparse_types",
             "feature_list_sparse_shapes: Nfeature_list_sparse * int64",
             "feature_list_dense_values: feature_list_dense_types",
             "feature_list_dense_lengths: Nfeature_list_dense * int64"],
    attrs=[f"feature_list_dense_missing_assumed_empty: {_KEYS}",
           f"context_sparse_keys: {_KEYS}", f"context_dense_keys: {_KEYS}",
           f"feature_list_sparse_keys: {_KEYS}", f"feature_list_dense_keys: {_KEYS}",
           "Ncontext_sparse: int >= 0 = 0", "Ncontext_dense: int >= 0 = 0",
           "Nfeature_list_sparse: int >= 0 = 0", "Nfeature_list_dense: int >= 0 = 0",
           f"context_sparse_types: {_TYPES}", f"Tcontext_dense: {_TYPES}",
           f"feature_list_dense_types: {_TYPES}", "context_dense_shapes: list(shape) >= 0 = []",
           f"feature_list_sparse_types: {_TYPES}",
           "feature_list_dense_shapes: list(shape) >= 0 = []"],
    differentiable=False)


@ParseSequenceExample.shape_fn
def _shape(serialized, debug_name, context_defaults, *, Ncontext_sparse, Nfeature_list_sparse,
           Nfeature_list_dense, context_dense_shapes,
           feature_list_dense_shapes):  # noqa: N803 - TF attr names
    batch = serialized.with_rank(1)._dim_list[0]
    return [[TensorShape([None, 2])] * Ncontext_sparse, [TensorShape([None])] * Ncontext_sparse,
            [TensorShape([2])] * Ncontext_sparse,
            [TensorShape([batch]).concatenate(as_shape(s)) for s in context_dense_shapes],
            [TensorShape([None, 3])] * Nfeature_list_sparse,
            [TensorShape([None])] * Nfeature_list_sparse,
            [TensorShape([3])] * Nfeature_list_sparse,
            [TensorShape([batch, None]).concatenate(as_shape(s))
             for s in feature_list_dense_shapes],
            [TensorShape([batch])] * Nfeature_list_dense]


def _name(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _stack_sparse(parts, dtype):
    """Per-example ([n, 2] indices, values, [2] shape) -> batched [n, 3] / [3]."""
    batch = len(parts)
    indices = [np.concatenate([np.full((len(i), 1), b, np.int64), i], axis=1)
               for b, (i, _, _) in enumerate(parts)]
    steps = max((int(s[0]) for _, _, s in parts), default=0)
    width = max((int(s[1]) for _, _, s in parts), default=0)
    return (np.concatenate(indices) if indices else np.empty((0, 3), np.int64),
            np.concatenate([v for _, v, _ in parts]) if parts
            else np.empty(0, dtype.as_numpy_dtype),
            np.array([batch, steps, width], np.int64))


def _stack_dense(parts, dtype, shape):
    """Per-example [T_i] + shape -> [batch, max T_i] + shape (zero / b"" padded), lengths."""
    lengths = np.array([len(p) for p in parts], np.int64)
    steps = int(lengths.max()) if len(parts) else 0
    out = np.zeros((len(parts), steps) + shape, dtype.as_numpy_dtype)
    if dtype == dtypes.string:
        out.fill(b"")
    for b, part in enumerate(parts):
        out[b, :len(part)] = part
    return out, lengths


@ParseSequenceExample.kernel(factory=True)
def _parse_sequence_batch_kernel(feature_list_dense_missing_assumed_empty, context_sparse_keys,
                                 context_dense_keys, feature_list_sparse_keys,
                                 feature_list_dense_keys, context_sparse_types, Tcontext_dense,
                                 feature_list_dense_types, context_dense_shapes,
                                 feature_list_sparse_types,
                                 feature_list_dense_shapes):  # noqa: N803 - TF attr names
    spec = example_parser.ParseSpec(
        tuple(context_sparse_keys), tuple(dtypes.as_dtype(t) for t in context_sparse_types),
        tuple(context_dense_keys), tuple(dtypes.as_dtype(t) for t in Tcontext_dense),
        tuple(tuple(as_shape(s).as_list()) for s in context_dense_shapes))
    sparse = [(k, dtypes.as_dtype(t)) for k, t in
              zip(feature_list_sparse_keys, feature_list_sparse_types)]
    dense = [(k, dtypes.as_dtype(t), tuple(as_shape(s).as_list())) for k, t, s in
             zip(feature_list_dense_keys, feature_list_dense_types, feature_list_dense_shapes)]
    assumed_empty = set(feature_list_dense_missing_assumed_empty)

    def kernel(serialized, debug_name, *defaults):
        records = np.asarray(serialized).reshape(-1)
        labels = [_name(n) for n in np.asarray(debug_name).reshape(-1)]
        names = [labels[i] if labels else "<unknown>" for i in range(len(records))]
        examples = [decode_sequence_example(r, n) for r, n in zip(records, names)]
        c_indices, c_values, c_shapes, c_dense = example_parser.parse_features(
            [e.context.feature for e in examples], labels, spec, defaults)
        per_example = [parse_feature_lists(e, n, sparse, dense, assumed_empty)
                       for e, n in zip(examples, names)]
        s_indices, s_values, s_shapes = [], [], []
        for j, (_, dtype) in enumerate(sparse):
            i, v, s = _stack_sparse([(p[0][j], p[1][j], p[2][j]) for p in per_example], dtype)
            s_indices.append(i)
            s_values.append(v)
            s_shapes.append(s)
        d_values, d_lengths = [], []
        for j, (_, dtype, shape) in enumerate(dense):
            values, lengths = _stack_dense([p[3][j] for p in per_example], dtype, shape)
            d_values.append(values)
            d_lengths.append(lengths)
        outputs = (c_indices + c_values + c_shapes + c_dense + s_indices + s_values + s_shapes
                   + d_values + d_lengths)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    return kernel


def parse_sequence_example(serialized, context_features=None, sequence_features=None,
                           example_names=None, name=None):
    """Parses a batch of serialized `tf.train.SequenceExample`s (TF 1.15 `tf.io` name).

    Args:
        serialized: a string vector [batch].
        context_features: dict of FixedLenFeature / VarLenFeature for the contexts.
        sequence_features: dict of FixedLenSequenceFeature / VarLenFeature for the feature
            lists; a FixedLenSequenceFeature list may be absent only with `allow_missing`
            (its default_value must be None: padding is zeros).
        example_names: optional string vector naming the examples in error messages.
        name: a name scope.

    Returns:
        (context dict, feature_list dict, feature_list_lengths dict): Tensors and
        SparseTensors; the lengths (int64 [batch]) exist for the FixedLenSequenceFeature keys.

    Raises:
        ValueError: no features, a feature of the wrong class, or a list default value.

    Example:
        >>> context, lists, lengths = tf.io.parse_sequence_example(
        ...     records, {"label": tf.io.FixedLenFeature([], tf.int64)},
        ...     {"tokens": tf.io.FixedLenSequenceFeature([], tf.int64)})
    """
    for key, feature in (sequence_features or {}).items():
        if getattr(feature, "default_value", None) is not None:
            raise ValueError(f"Value feature_list.dense_defaults[{key}] must be None")
    (c_sparse, c_sparse_types, c_dense, c_dense_types, c_shapes, c_given, l_sparse,
     l_sparse_types, l_dense, l_dense_types, l_shapes, missing) = feature_params(
        context_features or {}, sequence_features or {})
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "ParseSequenceExample"):
        string = dtypes.string
        defaults = [_default_tensor(k, t, s, c_given.get(k))
                    for k, t, s in zip(c_dense, c_dense_types, c_shapes)]
        out = ParseSequenceExample(
            convert_to_tensor(serialized, dtype=string),
            convert_to_tensor(np.array([] if example_names is None else example_names,
                                       dtype=object).reshape(-1), dtype=string),
            defaults, feature_list_dense_missing_assumed_empty=missing,
            Ncontext_sparse=len(c_sparse), Ncontext_dense=len(c_dense),
            Nfeature_list_sparse=len(l_sparse), Nfeature_list_dense=len(l_dense),
            context_sparse_keys=c_sparse, context_dense_keys=c_dense,
            feature_list_sparse_keys=l_sparse, feature_list_dense_keys=l_dense,
            context_sparse_types=c_sparse_types, Tcontext_dense=c_dense_types,
            context_dense_shapes=c_shapes, feature_list_sparse_types=l_sparse_types,
            feature_list_dense_types=l_dense_types, feature_list_dense_shapes=l_shapes,
            name="ParseSequenceExample")
    context, lists = outputs_by_key(out, c_sparse, c_dense, l_sparse, l_dense)
    lengths = {k: out.feature_list_dense_lengths[i] for i, k in enumerate(l_dense)}
    return context, lists, lengths
