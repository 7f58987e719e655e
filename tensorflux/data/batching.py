"""`batch`, `padded_batch` and `unbatch`: consecutive elements stacked along a new first axis.

The batch dimension is static only with `drop_remainder=True` and a batch size known when the
dataset is built; otherwise it is None (the last batch may be smaller), as in TF.
"""

from __future__ import annotations

import numpy as np

from tensorflux.data import structure
from tensorflux.data.dataset_ops import Dataset, ElementError, scalar_arg, static_int
from tensorflux.framework import dtypes, errors
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value
from tensorflux.framework.tensor_shape import TensorShape


def _batch_shapes(shapes, size, drop_remainder: bool):
    dim = size if drop_remainder and size is not None else None
    return [TensorShape([dim]).concatenate(shape) for shape in shapes]


def _groups(source, size: int, drop_remainder: bool):
    """Lists of `size` elements; an ElementError is passed on alone and drops its batch."""
    group = []
    for element in source:
        if type(element) is ElementError:
            group = []
            yield element
            continue
        group.append(element)
        if len(group) == size:
            yield group
            group = []
    if group and not drop_remainder:
        yield group


def _check_size(size: int) -> None:
    if size <= 0:
        raise errors.InvalidArgumentError(None, None, "Batch size must be greater than zero, "
                                          f"got {size}.")


class _BatchingDataset(Dataset):
    """Groups `_size` consecutive elements (the last, smaller group kept unless `_drop`);
    `_combine(i, parts, ctx)` makes component `i` of a batch from the group's parts."""

    def _check(self, ctx):
        _check_size(ctx.scalar(self._size))

    def _iterate(self, ctx):
        size = ctx.scalar(self._size)
        for group in _groups(self._inputs[0]._iterate(ctx), size, self._drop):
            if type(group) is ElementError:
                yield group
                continue
            columns = list(zip(*group))
            sparse = {pos for pos, _ in structure.sparse_positions(self._template)}
            flat, i = [], 0
            while i < len(columns):
                if i in sparse:
                    flat.extend(structure.batch_sparse(list(zip(*columns[i:i + 3]))))
                    i += 3
                else:
                    flat.append(self._combine(i, columns[i], ctx))
                    i += 1
            yield tuple(flat)


def _batched_sparse(template, shapes, size, drop_remainder: bool):
    """(shapes, template) of a batch: a sparse component's leaves and dense shape get the
    batch dimension (static only with drop_remainder and a known size)."""
    dim = size if drop_remainder and size is not None else None
    shapes = list(shapes)
    for pos, node in structure.sparse_positions(template):
        rank = None if node.shape.ndims is None else node.shape.ndims + 1
        shapes[pos:pos + 3] = [TensorShape([None, rank]), TensorShape([None]),
                               TensorShape([rank])]
    template = structure.replace_sparse(
        template, lambda node: structure.SparseNode(
            None, None, None, TensorShape([dim]).concatenate(node.shape)))
    return shapes, template


class BatchDataset(_BatchingDataset):
    """Stacks consecutive elements; sparse components are batched as TF does: the batch index
    is prepended to the indices and the dense shape is `[batch, max of each dimension]`."""

    def __init__(self, dataset, batch_size, drop_remainder):
        self._size = scalar_arg(batch_size, "batch_size", "Dataset.batch()")
        self._drop = bool(drop_remainder)
        size = static_int(self._size)
        shapes, template = _batched_sparse(
            dataset._template, _batch_shapes(dataset._shapes, size, self._drop), size, self._drop)
        super().__init__([dataset], [self._size], dataset._types, shapes, template)

    def _combine(self, i, parts, ctx):
        first = parts[0].shape
        for k, part in enumerate(parts):
            if part.shape != first:
                raise errors.InvalidArgumentError(
                    None, None, f"Cannot batch tensors with different shapes in "
                    f"component {i}. First element had shape {list(first)} and "
                    f"element {k} had shape {list(part.shape)}.")
        return np.stack(parts)


def _padding_value(value, dtype, what):
    if value is None:
        return b"" if dtype is dtypes.string else np.zeros((), dtype.as_numpy_dtype)
    if isinstance(value, Tensor):
        folded = constant_value(value)
        if folded is None:
            raise ValueError(f"{what}: padding values must be constants, got '{value.name}'")
        value = folded
    array = structure.as_array(value, dtype)
    if array.ndim != 0:
        raise ValueError(f"{what}: each padding value must be a scalar, got shape "
                         f"{list(array.shape)}")
    return array.item() if dtype is dtypes.string else array


def _pad_spec(value, what):
    """A padded shape -> (dims: list of int/None/scalar Tensor, or a 1-D Tensor, or None for
    an unknown rank; its static TensorShape; the tensors to capture)."""
    if isinstance(value, Tensor):
        folded = constant_value(value)
        if folded is None:
            if value.shape.ndims not in (None, 1):
                raise ValueError(f"{what}: a padded shape tensor must be a vector, got shape "
                                 f"{value.shape}")
            length = value.shape.as_list()[0] if value.shape.ndims == 1 else None
            static = TensorShape(None) if length is None else TensorShape([None] * length)
            return value, static, [value]
        value = np.asarray(folded).reshape(-1).tolist()
    if value is None or (isinstance(value, TensorShape) and value.ndims is None):
        return None, TensorShape(None), []
    if isinstance(value, TensorShape):
        value = value.as_list()
    dims, captures = [], []
    for dim in value:
        if isinstance(dim, Tensor):
            folded = constant_value(dim)
            if folded is None:
                dims.append(dim)
                captures.append(dim)
                continue
            dim = folded
        dim = getattr(dim, "value", dim)
        dims.append(None if dim is None or int(dim) < 0 else int(dim))
    return dims, TensorShape([d if not isinstance(d, Tensor) else None for d in dims]), captures


def _resolve(spec, ctx, rank: int):
    if spec is None:
        return [None] * rank
    if isinstance(spec, Tensor):
        return [None if d < 0 else int(d) for d in np.asarray(ctx.value(spec)).reshape(-1)]
    return [ctx.scalar(d) if isinstance(d, Tensor) else d for d in spec]


class PaddedBatchDataset(_BatchingDataset):
    """Batches elements padded (at the end of each axis) to `padded_shapes`; None or -1
    dimensions pad to the largest element of the batch. Padded shapes may hold tensors (e.g.
    computed from a group key); they are read when the iterator runs."""

    def __init__(self, dataset, batch_size, padded_shapes, padding_values, drop_remainder):
        what = "Dataset.padded_batch()"
        if structure.sparse_positions(dataset._template):
            raise TypeError(f"{what}: Batching of padded sparse tensors is not currently "
                            "supported")
        self._size = scalar_arg(batch_size, "batch_size", what)
        self._drop = bool(drop_remainder)
        if padded_shapes is None:
            given = [None if s.ndims is None else [None] * s.ndims for s in dataset._shapes]
        else:
            given = _leaves_like(padded_shapes, dataset._template, what, shapes=True)
        specs = [_pad_spec(value, what) for value in given]
        captures = [t for _, _, tensors in specs for t in tensors]
        shapes = [static for _, static, _ in specs]
        for shape, element in zip(shapes, dataset._shapes):
            if not element.is_compatible_with(TensorShape([None] * shape.ndims)
                                              if shape.ndims is not None else shape):
                raise ValueError(f"{what}: the padded shape {shape} is not compatible with the "
                                 f"element shape {element}")
        values = [None] * len(shapes) if padding_values is None else \
            _leaves_like(padding_values, dataset._template, what)
        self._pad_specs = [spec for spec, _, _ in specs]
        self._pad_values = [_padding_value(v, d, what) for v, d in zip(values, dataset._types)]
        size = static_int(self._size)
        super().__init__([dataset], [self._size] + captures, dataset._types,
                         _batch_shapes(shapes, size, self._drop), dataset._template)

    def _combine(self, i, parts, ctx):
        return self._pad(i, parts, _resolve(self._pad_specs[i], ctx, parts[0].ndim))

    def _pad(self, i, parts, wanted):
        rank = parts[0].ndim
        if any(p.ndim != rank for p in parts) or len(wanted) != rank:
            raise errors.InvalidArgumentError(None, None, f"padded_batch: elements of component "
                                              f"{i} have different ranks, or a rank other than "
                                              f"the padded shape's {len(wanted)}")
        largest = np.max([p.shape for p in parts], axis=0) if rank else ()
        dims = [int(m) if d is None else d for m, d in zip(largest, wanted)]
        if any(m > d for m, d in zip(largest, dims)):
            raise errors.DataLossError(None, None, "Attempted to pad to a smaller size than the "
                                       f"input element (component {i}: padded shape {dims}, "
                                       f"largest element shape {[int(m) for m in largest]}).")
        batch = np.empty([len(parts)] + dims, dtype=parts[0].dtype)
        batch[...] = self._pad_values[i]
        for k, part in enumerate(parts):
            # NOTE: part[()] for a scalar: an object (string) array would store a 0-d array itself.
            batch[(k,) + tuple(slice(0, n) for n in part.shape)] = part if rank else part[()]
        return batch


def _leaves_like(value, template, what, shapes=False):
    if not structure.is_nested(template):
        return [value]
    if shapes:
        return _shape_leaves(value, template, what)
    if not structure.is_nested(value):
        return [value] * len(structure.flatten(template))
    if not structure.same_nesting(value, template):
        raise ValueError(f"{what}: padding values must have the element's structure")
    return structure.flatten(value)


def _shape_leaves(value, template, what):
    if isinstance(template, dict):
        if not isinstance(value, dict) or sorted(value) != sorted(template):
            raise ValueError(f"{what}: padded_shapes must have the element's structure")
        return [s for key in sorted(template) for s in _shape_leaves(value[key], template[key],
                                                                     what)]
    if isinstance(template, tuple):
        if not isinstance(value, tuple) or len(value) != len(template):
            raise ValueError(f"{what}: padded_shapes must have the element's structure")
        return [s for v, t in zip(value, template) for s in _shape_leaves(v, t, what)]
    return [value]


class UnbatchDataset(Dataset):
    """Splits each element along its first axis (`tf.data.experimental.unbatch()`)."""

    def __init__(self, dataset):
        sparse = dict(structure.sparse_positions(dataset._template))
        shapes, i = [], 0
        while i < len(dataset._shapes):
            node = sparse.get(i)
            if node is not None:
                if node.shape.ndims == 0:
                    raise ValueError("unbatch() requires every component to have rank >= 1")
                inner = TensorShape(None) if node.shape.ndims is None else \
                    TensorShape(node.shape.as_list()[1:])
                shapes += structure.sparse_leaf_specs(dataset._types[i + 1], inner)[1]
                i += 3
                continue
            shape = dataset._shapes[i]
            if shape.ndims == 0:
                raise ValueError("unbatch() requires every component to have rank >= 1")
            shapes.append(TensorShape(shape.as_list()[1:]) if shape.ndims is not None
                          else TensorShape(None))
            i += 1
        template = structure.replace_sparse(
            dataset._template, lambda node: structure.SparseNode(
                None, None, None, TensorShape(None) if node.shape.ndims is None
                else TensorShape(node.shape.as_list()[1:])))
        self._sparse = set(sparse)
        super().__init__([dataset], [], dataset._types, shapes, template)

    def _iterate(self, ctx):
        for element in self._inputs[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            parts, i = [], 0
            while i < len(element):
                if i in self._sparse:
                    parts.append(structure.split_sparse(element[i:i + 3]))
                    i += 3
                else:
                    parts.append(element[i])
                    i += 1
            rows = len(parts[0])
            if any(len(part) != rows for part in parts):
                raise errors.InvalidArgumentError(None, None, "unbatch(): the components of an "
                                                  "element have different batch sizes")
            for i in range(rows):
                flat = []
                for part in parts:
                    if isinstance(part, np.ndarray):
                        flat.append(part[i, ...])
                    else:
                        flat.extend(part[i])
                yield tuple(flat)


class DenseToSparseBatchDataset(Dataset):
    """`tf.data.experimental.dense_to_sparse_batch`: batches single-tensor elements of
    varying shape into SparseTensors of dense shape `[batch] + row_shape` (a `-1`/None entry
    takes the batch's largest size). Every entry of an element becomes a value."""

    def __init__(self, dataset, batch_size, row_shape):
        what = "dense_to_sparse_batch()"
        if structure.is_nested(dataset._template) or \
                structure.sparse_positions(dataset._template):
            raise TypeError("DenseToSparseDataset requires an input whose elements have a "
                            f"single component, whereas the input has {dataset.output_classes}.")
        self._size = scalar_arg(batch_size, "batch_size", what)
        dims, static, captures = _pad_spec(row_shape, what)
        if static.ndims is None:
            raise ValueError(f"{what}: row_shape must have a known length")
        if not dataset._shapes[0].is_compatible_with(TensorShape([None] * static.ndims)):
            raise ValueError(f"{what}: row_shape {static} does not match the element shape "
                             f"{dataset._shapes[0]}")
        self._row = dims
        types = [dtypes.int64, dataset._types[0], dtypes.int64]
        shapes = [TensorShape([None, static.ndims + 1]), TensorShape([None]),
                  TensorShape([static.ndims + 1])]
        template = structure.SparseNode(None, None, None,
                                        TensorShape([None]).concatenate(static))
        super().__init__([dataset], [self._size] + captures, types, shapes, template)

    def _check(self, ctx):
        _check_size(ctx.scalar(self._size))

    def _iterate(self, ctx):
        size = ctx.scalar(self._size)
        for group in _groups(self._inputs[0]._iterate(ctx), size, False):
            if type(group) is ElementError:
                yield group
                continue
            parts = [element[0] for element in group]
            wanted = _resolve(self._row, ctx, len(self._row) if isinstance(self._row, list)
                              else parts[0].ndim)
            largest = np.max([p.shape for p in parts], axis=0) if wanted else []
            dims = [int(m) if d is None else d for m, d in zip(largest, wanted)]
            for part in parts:
                if part.ndim != len(dims) or any(n > d for n, d in zip(part.shape, dims)):
                    raise errors.InvalidArgumentError(
                        None, None, f"Input element had shape ({list(part.shape)}) that is "
                        f"incompatible with the row shape ({dims}).")
            triples = [(np.argwhere(np.ones(p.shape, dtype=bool)).astype(np.int64),
                        p.reshape(-1), np.asarray(dims, np.int64)) for p in parts]
            yield structure.batch_sparse(triples)


__all__: list = []
