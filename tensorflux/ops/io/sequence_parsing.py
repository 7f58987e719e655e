"""`tf.parse_single_sequence_example`: a `tf.train.SequenceExample` into context and sequence
tensors (TensorFlow's `ParseSingleSequenceExample` op).

Context features parse like `parse_single_example`. A sequence feature reads one FeatureList:
a `FixedLenSequenceFeature(shape)` becomes a dense `[T] + shape` tensor (T = number of steps;
each step must hold exactly `prod(shape)` values), a `VarLenFeature` a SparseTensor with
`[step, position]` indices and dense shape `[T, longest step]`.
"""

from __future__ import annotations

import numpy as np
from google.protobuf.message import DecodeError

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.lib.formats import example_parser
from tensorflux.ops.io.parsing import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    VarLenFeature,
    _default_tensor,
    _features_to_raw_params,
)
from tensorflux.protos import example_pb2

__all__ = ["parse_single_sequence_example"]

_TYPES = "list(type) >= 0 = []"

ParseSingleSequenceExample = define_op(
    "ParseSingleSequenceExample",
    inputs=["serialized: string", "feature_list_dense_missing_assumed_empty: string",
            "context_sparse_keys: Ncontext_sparse * string",
            "context_dense_keys: Ncontext_dense * string",
            "feature_list_sparse_keys: Nfeature_list_sparse * string",
            "feature_list_dense_keys: Nfeature_list_dense * string",
            "context_dense_defaults: Tcontext_dense", "debug_name: string"],
    outputs=["context_sparse_indices: Ncontext_sparse * int64",
             "context_sparse_values: context_sparse_types",
             "context_sparse_shapes: Ncontext_sparse * int64",
             "context_dense_values: Tcontext_dense",
             "feature_list_sparse_indices: Nfeature_list_sparse * int64",
             "feature_list_sparse_values: feature_list_sparse_types",
             "feature_list_sparse_shapes: Nfeature_list_sparse * int64",
             "feature_list_dense_values: feature_list_dense_types"],
    attrs=["Ncontext_sparse: int >= 0 = 0", "Ncontext_dense: int >= 0 = 0",
           "Nfeature_list_sparse: int >= 0 = 0", "Nfeature_list_dense: int >= 0 = 0",
           f"context_sparse_types: {_TYPES}", f"Tcontext_dense: {_TYPES}",
           f"feature_list_dense_types: {_TYPES}", "context_dense_shapes: list(shape) >= 0 = []",
           f"feature_list_sparse_types: {_TYPES}",
           "feature_list_dense_shapes: list(shape) >= 0 = []"],
    differentiable=False)


@ParseSingleSequenceExample.shape_fn
def _shape(serialized, missing, context_sparse_keys, context_dense_keys, list_sparse_keys,
           list_dense_keys, context_defaults, debug_name, *, Ncontext_sparse,
           Nfeature_list_sparse, context_dense_shapes,
           feature_list_dense_shapes):  # noqa: N803 - TF attr names
    serialized.with_rank(0)
    return [[TensorShape([None, 1])] * Ncontext_sparse, [TensorShape([None])] * Ncontext_sparse,
            [TensorShape([1])] * Ncontext_sparse, [as_shape(s) for s in context_dense_shapes],
            [TensorShape([None, 2])] * Nfeature_list_sparse,
            [TensorShape([None])] * Nfeature_list_sparse,
            [TensorShape([2])] * Nfeature_list_sparse,
            [TensorShape([None]).concatenate(as_shape(s)) for s in feature_list_dense_shapes]]


def _keys(values) -> list:
    out = []
    for value in values:
        item = np.asarray(value).reshape(-1)[0]
        out.append(item.decode() if isinstance(item, bytes) else str(item))
    return out


def _steps(feature_list, key, dtype, name):
    return [example_parser.feature_values(f, dtype, key, name, t)
            for t, f in enumerate(feature_list.feature)]


def decode_sequence_example(record, name):
    """The `SequenceExample` proto in `record` (bytes); InvalidArgumentError naming `name`."""
    try:
        return example_pb2.SequenceExample.FromString(record)
    except (DecodeError, TypeError, ValueError) as err:
        raise errors.InvalidArgumentError(
            None, None, f"Could not parse example input, value: {record[:64]!r} ({name}): "
            f"{err}") from None


def parse_feature_lists(example, name, sparse, dense, assumed_empty):
    """One example's feature lists.

    Args:
        example: a decoded SequenceExample.
        name: the example's name for error messages.
        sparse: [(key, dtype)] of VarLen feature lists.
        dense: [(key, dtype, shape tuple)] of FixedLenSequence feature lists.
        assumed_empty: keys of dense lists that may be absent (read as zero steps).

    Returns:
        (sparse indices [n, 2], sparse values, sparse shapes [2], dense values [T] + shape),
        each a list in key order.

    Raises:
        InvalidArgumentError: a required list is absent or a step has the wrong size.
    """
    lists = example.feature_lists.feature_list
    s_indices, s_values, s_shapes = [], [], []
    for key, dtype in sparse:
        steps = _steps(lists[key], key, dtype, name) if key in lists else []
        lengths = np.fromiter((len(s) for s in steps), np.int64, len(steps))
        starts = np.cumsum(lengths) - lengths
        total = int(lengths.sum())
        s_indices.append(np.stack([
            np.repeat(np.arange(len(steps), dtype=np.int64), lengths),
            np.arange(total, dtype=np.int64) - np.repeat(starts, lengths)], axis=1))
        s_values.append(np.concatenate(steps) if steps else
                        np.empty(0, dtype.as_numpy_dtype))
        s_shapes.append(np.array([len(steps), int(lengths.max()) if steps else 0], np.int64))
    d_values = []
    for key, dtype, shape in dense:
        size = int(np.prod(shape, dtype=np.int64))
        if key not in lists:
            if key not in assumed_empty:
                raise errors.InvalidArgumentError(
                    None, None, f"Name: {name}, Feature list '{key}' is required but "
                    "could not be found.  Did you mean to include it in "
                    "feature_list_dense_missing_assumed_empty or "
                    "feature_list_dense_defaults?")
            d_values.append(np.empty((0,) + shape, dtype.as_numpy_dtype))
            continue
        steps = _steps(lists[key], key, dtype, name)
        for t, step in enumerate(steps):
            if len(step) != size:
                raise errors.InvalidArgumentError(
                    None, None, f"Name: {name}, Key: {key}, Index: {t}.  Number of "
                    f"values != expected.  values size: {len(step)} but output shape: "
                    f"[{','.join(str(d) for d in shape)}]")
        flat = np.concatenate(steps) if steps else np.empty(0, dtype.as_numpy_dtype)
        d_values.append(flat.reshape((len(steps),) + shape))
    return s_indices, s_values, s_shapes, d_values


@ParseSingleSequenceExample.kernel(factory=True)
def _parse_sequence_kernel(Ncontext_sparse, Ncontext_dense, Nfeature_list_sparse,
                           Nfeature_list_dense, context_sparse_types, Tcontext_dense,
                           feature_list_dense_types, context_dense_shapes,
                           feature_list_sparse_types, feature_list_dense_shapes):  # noqa: N803
    context_types = (tuple(dtypes.as_dtype(t) for t in context_sparse_types),
                     tuple(dtypes.as_dtype(t) for t in Tcontext_dense))
    list_sparse_types = [dtypes.as_dtype(t) for t in feature_list_sparse_types]
    list_dense_types = [dtypes.as_dtype(t) for t in feature_list_dense_types]
    context_shapes = tuple(tuple(as_shape(s).as_list()) for s in context_dense_shapes)
    list_shapes = [tuple(as_shape(s).as_list()) for s in feature_list_dense_shapes]

    def kernel(serialized, missing, *rest):
        cuts = np.cumsum([Ncontext_sparse, Ncontext_dense, Nfeature_list_sparse,
                          Nfeature_list_dense, Ncontext_dense])
        context_sparse_keys = _keys(rest[:cuts[0]])
        context_dense_keys = _keys(rest[cuts[0]:cuts[1]])
        list_sparse_keys = _keys(rest[cuts[1]:cuts[2]])
        list_dense_keys = _keys(rest[cuts[2]:cuts[3]])
        defaults = rest[cuts[3]:cuts[4]]
        debug = np.asarray(rest[cuts[4]]).item()
        name = (debug.decode() if isinstance(debug, bytes) else str(debug)) or "<unknown>"
        assumed_empty = set(_keys(np.asarray(missing).reshape(-1)))
        example = decode_sequence_example(np.asarray(serialized).item(), name)
        spec = example_parser.ParseSpec(tuple(context_sparse_keys), context_types[0],
                                        tuple(context_dense_keys), context_types[1],
                                        context_shapes)
        c_indices, c_values, c_shapes, c_dense = example_parser.parse_features(
            [example.context.feature], [name], spec, defaults)
        s_indices, s_values, s_shapes, d_values = parse_feature_lists(
            example, name, list(zip(list_sparse_keys, list_sparse_types)),
            list(zip(list_dense_keys, list_dense_types, list_shapes)), assumed_empty)
        c_indices = [i[:, 1:] for i in c_indices]
        c_shapes = [s[1:] for s in c_shapes]
        c_dense = [d.reshape(d.shape[1:]) for d in c_dense]  # 0-d string stays an ndarray
        outputs = (c_indices + c_values + c_shapes + c_dense + s_indices + s_values + s_shapes
                   + d_values)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    return kernel


def feature_params(context_features, sequence_features):
    """The op parameters of a context and a sequence feature dict (keys sorted).

    Returns:
        (context sparse keys, types, context dense keys, types, shapes, given defaults,
        list sparse keys, types, list dense keys, types, shapes, keys allowed missing).

    Raises:
        ValueError: no features, a feature of the wrong class, or a partly known shape.
    """
    context_features = context_features or {}
    sequence_features = sequence_features or {}
    if not context_features and not sequence_features:
        raise ValueError("Missing features.")
    c_sparse, c_sparse_types, c_dense, c_dense_types, c_shapes, c_given = (
        _features_to_raw_params(context_features) if context_features
        else ([], [], [], [], [], {}))
    for key, feature in context_features.items():
        if not isinstance(feature, (FixedLenFeature, VarLenFeature)):
            raise ValueError(f"Context feature '{key}' must be a FixedLenFeature or a "
                             f"VarLenFeature, got {feature}")
    l_sparse, l_sparse_types, l_dense, l_dense_types, l_shapes, missing = [], [], [], [], [], []
    for key in sorted(sequence_features):
        feature = sequence_features[key]
        if isinstance(feature, VarLenFeature):
            example_parser.check_type(dtypes.as_dtype(feature.dtype), f"feature list '{key}'")
            l_sparse.append(key)
            l_sparse_types.append(dtypes.as_dtype(feature.dtype))
        elif isinstance(feature, FixedLenSequenceFeature):
            example_parser.check_type(dtypes.as_dtype(feature.dtype), f"feature list '{key}'")
            shape = as_shape(feature.shape)
            if not shape.is_fully_defined():
                raise ValueError(f"All dimensions of shape for feature list {key} need to be "
                                 f"known but received {shape}.")
            l_dense.append(key)
            l_dense_types.append(dtypes.as_dtype(feature.dtype))
            l_shapes.append(shape)
            if feature.allow_missing:
                missing.append(key)
        else:
            raise ValueError(f"Sequence feature '{key}' must be a FixedLenSequenceFeature or "
                             f"a VarLenFeature, got {feature}")
    return (c_sparse, c_sparse_types, c_dense, c_dense_types, c_shapes, c_given, l_sparse,
            l_sparse_types, l_dense, l_dense_types, l_shapes, missing)


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None,
                                  example_name=None, name=None):
    """Parses one serialized `tf.train.SequenceExample` (TF1 name).

    Args:
        serialized: a string scalar.
        context_features: dict of FixedLenFeature / VarLenFeature for the context.
        sequence_features: dict of FixedLenSequenceFeature / VarLenFeature for the feature
            lists; a FixedLenSequenceFeature list may be absent only with `allow_missing`.
        example_name: a name for error messages.
        name: a name scope.

    Returns:
        (context dict, sequence dict) of Tensors and SparseTensors.

    Example:
        >>> context, sequence = tf.parse_single_sequence_example(
        ...     record, {"length": tf.FixedLenFeature([], tf.int64)},
        ...     {"tokens": tf.FixedLenSequenceFeature([], tf.int64)})
    """

    (c_sparse, c_sparse_types, c_dense, c_dense_types, c_shapes, c_given, l_sparse,
     l_sparse_types, l_dense, l_dense_types, l_shapes, missing) = feature_params(
        context_features, sequence_features)
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "ParseSingleSequenceExample"):
        string = dtypes.string
        defaults = [_default_tensor(k, t, s, c_given.get(k))
                    for k, t, s in zip(c_dense, c_dense_types, c_shapes)]
        out = ParseSingleSequenceExample(
            convert_to_tensor(serialized, dtype=string),
            convert_to_tensor(np.array(missing, dtype=object).reshape(-1), dtype=string),
            [convert_to_tensor(k, dtype=string) for k in c_sparse],
            [convert_to_tensor(k, dtype=string) for k in c_dense],
            [convert_to_tensor(k, dtype=string) for k in l_sparse],
            [convert_to_tensor(k, dtype=string) for k in l_dense],
            defaults, convert_to_tensor(example_name or "", dtype=string),
            context_sparse_types=c_sparse_types, Tcontext_dense=c_dense_types,
            context_dense_shapes=c_shapes, feature_list_sparse_types=l_sparse_types,
            feature_list_dense_types=l_dense_types, feature_list_dense_shapes=l_shapes,
            name="ParseSingleSequenceExample")
    return outputs_by_key(out, c_sparse, c_dense, l_sparse, l_dense)


def outputs_by_key(out, c_sparse, c_dense, l_sparse, l_dense):
    """(context, feature lists) dicts of a sequence-parsing op's outputs: SparseTensors for the
    sparse keys, Tensors for the dense ones (shared by the single and the batched op)."""
    context = {k: SparseTensor(out.context_sparse_indices[i], out.context_sparse_values[i],
                               out.context_sparse_shapes[i]) for i, k in enumerate(c_sparse)}
    context.update({k: out.context_dense_values[i] for i, k in enumerate(c_dense)})
    sequence = {k: SparseTensor(out.feature_list_sparse_indices[i],
                                out.feature_list_sparse_values[i],
                                out.feature_list_sparse_shapes[i])
                for i, k in enumerate(l_sparse)}
    sequence.update({k: out.feature_list_dense_values[i] for i, k in enumerate(l_dense)})
    return context, sequence
