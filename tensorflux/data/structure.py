"""Element structures of `tf.data`: nesting, component types and shapes, value conversion.

An element is a nested structure of components. As in TF1's `tf.data`, tuples, namedtuples and
dicts (flattened in sorted key order) nest; a Python list is a *value* (converted to one tensor),
not a structure. Inside the pipeline an element travels as a flat tuple of ndarrays.

A SparseTensor (or SparseTensorValue) component is one `SparseNode` of the template: it
flattens to three leaves (indices int64 `[N, rank]`, values `[N]`, dense_shape int64 `[rank]`)
and keeps its static dense shape, so transformations that move flat tuples carry it unchanged;
`pack_element` rebuilds SparseTensors and `pack_types`/`pack_shapes`/`pack_classes` give TF1's
`output_*` answers (the values' dtype, the dense shape, `SparseTensor`).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import _infer_numpy, convert_to_tensor, is_tensor_like
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.ops.array import stack


class SparseNode:
    """A sparse component: its three flat leaves and its static dense shape."""

    __slots__ = ("indices", "values", "dense_shape", "shape")

    def __init__(self, indices, values, dense_shape, shape):
        self.indices, self.values, self.dense_shape = indices, values, dense_shape
        self.shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)

    def leaves(self) -> list:
        return [self.indices, self.values, self.dense_shape]

    def __repr__(self) -> str:
        return f"SparseNode(shape={self.shape})"


def is_sparse(value) -> bool:
    return isinstance(value, (SparseTensor, SparseTensorValue))


def sparse_leaf_specs(dtype, shape: TensorShape):
    """The flat (types, shapes) of a sparse component of values `dtype` and dense `shape`."""
    rank = shape.ndims
    return ([dtypes.int64, dtype, dtypes.int64],
            [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])])


def sparse_positions(template) -> list:
    """(flat position of the indices leaf, SparseNode) of each sparse component, in order."""
    found, pos = [], 0
    for node in components(template):
        if isinstance(node, SparseNode):
            found.append((pos, node))
            pos += 3
        else:
            pos += 1
    return found


def components(structure):
    """The components of a nested element in order: leaves, with a SparseNode as one."""
    if isinstance(structure, dict):
        return [n for key in sorted(structure) for n in components(structure[key])]
    if isinstance(structure, tuple):
        return [n for item in structure for n in components(item)]
    return [structure]


def replace_sparse(template, fn):
    """`template` with each SparseNode replaced by `fn(node)`."""
    if isinstance(template, dict):
        built = {key: replace_sparse(template[key], fn) for key in template}
        return type(template)(built) if type(template) is not dict else built
    if isinstance(template, tuple):
        items = [replace_sparse(item, fn) for item in template]
        return type(template)(*items) if hasattr(template, "_fields") else tuple(items)
    return fn(template) if isinstance(template, SparseNode) else template


def is_nested(value) -> bool:
    return isinstance(value, (tuple, dict))


def flatten(structure) -> list:
    """The leaves of `structure` in order (dicts by sorted key; a SparseNode gives three)."""
    if isinstance(structure, SparseNode):
        return structure.leaves()
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in flatten(structure[key])]
    if isinstance(structure, tuple):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def _keep_node(node, triple):
    return SparseNode(*triple, shape=node.shape)


def _pack(template, leaves, pos, sparse):
    if isinstance(template, SparseNode):
        if pos + 3 > len(leaves):
            raise ValueError(f"Structure needs more than the {len(leaves)} values given")
        return sparse(template, leaves[pos:pos + 3]), pos + 3
    if isinstance(template, dict):
        built = {}
        for key in sorted(template):
            built[key], pos = _pack(template[key], leaves, pos, sparse)
        return type(template)(built) if type(template) is not dict else built, pos
    if isinstance(template, tuple):
        items = []
        for item in template:
            value, pos = _pack(item, leaves, pos, sparse)
            items.append(value)
        if hasattr(template, "_fields"):
            return type(template)(*items), pos
        return tuple(items), pos
    return leaves[pos], pos + 1


def pack(template, leaves, sparse=_keep_node):
    """Rebuilds `template`'s nesting around the flat `leaves`; each SparseNode of the template
    takes three leaves and becomes `sparse(node, [indices, values, dense_shape])` (by default
    a SparseNode of those leaves)."""
    leaves = list(leaves)
    built, used = _pack(template, leaves, 0, sparse)
    if used != len(leaves):
        raise ValueError(f"Structure has {used} components but {len(leaves)} values were given")
    return built


def _sparse_tensor(node, triple):
    if all(isinstance(t, Tensor) for t in triple):
        return SparseTensor(*triple)
    return SparseTensorValue(*triple)


def pack_element(template, leaves):
    """An element from flat tensors (or arrays): sparse components become SparseTensors
    (SparseTensorValues for arrays)."""
    return pack(template, leaves, _sparse_tensor)


def pack_types(template, types):
    """TF1 `output_types`: a sparse component's type is its values' dtype."""
    return pack(template, types, lambda node, triple: triple[1])


def pack_shapes(template, shapes):
    """TF1 `output_shapes`: a sparse component's shape is its static dense shape."""
    return pack(template, shapes, lambda node, triple: node.shape)


def pack_classes(template, count: int):
    """TF1 `output_classes`: tf.Tensor, or SparseTensor for a sparse component."""
    return pack(template, [Tensor] * count, lambda node, triple: SparseTensor)


def map_structure(fn, structure):
    return pack(structure, [fn(leaf) for leaf in flatten(structure)])


def same_nesting(first, second) -> bool:
    if isinstance(first, SparseNode) or isinstance(second, SparseNode):
        return isinstance(first, SparseNode) and isinstance(second, SparseNode)
    if isinstance(first, dict) or isinstance(second, dict):
        return (isinstance(first, dict) and isinstance(second, dict)
                and sorted(first) == sorted(second)
                and all(same_nesting(first[k], second[k]) for k in first))
    if isinstance(first, tuple) or isinstance(second, tuple):
        return (isinstance(first, tuple) and isinstance(second, tuple)
                and len(first) == len(second)
                and all(same_nesting(a, b) for a, b in zip(first, second)))
    return True


def as_array(value, dtype=None) -> np.ndarray:
    """A Python/NumPy leaf as an ndarray with TF's dtype inference (strings as bytes objects)."""
    return _infer_numpy(value, None if dtype is None else dtypes.as_dtype(dtype))


def dtype_of(array: np.ndarray):
    if array.dtype == object:
        return dtypes.string
    return dtypes.as_dtype(array.dtype)


def normalize(value, what: str):
    """Nested Python/NumPy/Tensor values -> the same nesting with Tensor or ndarray leaves."""
    if is_sparse(value):  # before tuples: a SparseTensorValue is a namedtuple
        return _sparse_node(value, what)
    if isinstance(value, dict):
        return {key: normalize(item, what) for key, item in value.items()}
    if isinstance(value, tuple):
        items = [normalize(item, what) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, Tensor):
        return value
    if isinstance(value, SparseNode):
        return value
    if not isinstance(value, (np.ndarray, np.generic, list, str, bytes, int, float, bool)) \
            and is_tensor_like(value):
        return convert_to_tensor(value)  # a Variable: read when the iterator is initialized
    if isinstance(value, list) and any(isinstance(v, Tensor) for v in value):
        return stack(value)
    try:
        return as_array(value)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{what}: cannot convert {value!r} to a tensor: {err}") from None


def sparse_as_nodes(value, what: str):
    """`value` (a function's result) with its SparseTensors/SparseTensorValues as SparseNodes."""
    if is_sparse(value):
        return _sparse_node(value, what)
    if isinstance(value, dict):
        return type(value)({key: sparse_as_nodes(item, what) for key, item in value.items()}) \
            if type(value) is not dict else \
            {key: sparse_as_nodes(item, what) for key, item in value.items()}
    if isinstance(value, tuple):
        items = [sparse_as_nodes(item, what) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


def _sparse_node(value, what: str) -> SparseNode:
    """A SparseTensor/SparseTensorValue -> SparseNode of Tensor or ndarray leaves."""
    if isinstance(value, SparseTensor):
        shape = value.shape
        if shape.ndims is None and value.dense_shape.shape.ndims == 1:
            rank = value.dense_shape.shape.as_list()[0]
            shape = TensorShape(None) if rank is None else TensorShape([None] * rank)
        return SparseNode(value.indices, value.values, value.dense_shape, shape)
    parts = (value.indices, value.values, value.dense_shape)
    if any(isinstance(part, Tensor) for part in parts):  # a SparseTensorValue built in a function
        try:
            return _sparse_node(SparseTensor(convert_to_tensor(value.indices, dtypes.int64),
                                             convert_to_tensor(value.values),
                                             convert_to_tensor(value.dense_shape, dtypes.int64)),
                                what)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{what}: cannot convert the SparseTensorValue {value!r}: {err}") \
                from None
    try:
        indices = np.asarray(value.indices, dtype=np.int64)
        dense_shape = np.asarray(value.dense_shape, dtype=np.int64)
        values = as_array(value.values)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{what}: cannot convert the SparseTensorValue {value!r}: {err}") from None
    if indices.ndim != 2 or values.ndim != 1 or dense_shape.ndim != 1 \
            or indices.shape[0] != values.shape[0] or indices.shape[1] != dense_shape.shape[0]:
        raise ValueError(f"{what}: a SparseTensorValue needs indices [N, rank], values [N] and "
                         f"dense_shape [rank], got shapes {list(indices.shape)}, "
                         f"{list(values.shape)} and {list(dense_shape.shape)}")
    return SparseNode(indices, values, dense_shape, TensorShape([int(d) for d in dense_shape]))


def leaf_spec(leaf):
    """(DType, TensorShape) of a Tensor or ndarray leaf."""
    if isinstance(leaf, Tensor):
        return leaf.dtype.base_dtype, leaf.shape
    return dtype_of(leaf), TensorShape(list(leaf.shape))


def element_specs(value):
    """Flat (types, shapes) of a normalized element; a sparse component gets the general
    leaf shapes `[None, rank]`, `[None]`, `[rank]` (its row count varies between elements)."""
    types, shapes = [], []
    for node in components(value):
        if isinstance(node, SparseNode):
            dtype, _ = leaf_spec(node.values)
            more_types, more_shapes = sparse_leaf_specs(dtype, node.shape)
        else:
            dtype, shape = leaf_spec(node)
            more_types, more_shapes = [dtype], [shape]
        types += more_types
        shapes += more_shapes
    return types, shapes


def with_sparse_classes(types_structure, types, shapes, classes, what: str):
    """Flat (types, shapes) and a template where `classes` (nested like `types_structure`)
    marks sparse components: each becomes a SparseNode of three leaves."""
    flat_classes = flatten(classes)
    if len(flat_classes) != len(types):
        raise ValueError(f"{what} must have the structure of output_types")
    out_types, out_shapes, leaves = [], [], []
    for dtype, shape, cls in zip(types, shapes, flat_classes):
        if cls is SparseTensor:
            more_types, more_shapes = sparse_leaf_specs(dtype, shape)
            leaves.append(SparseNode(None, None, None, shape))
        else:
            more_types, more_shapes = [dtype], [shape]
            leaves.append(dtype)
        out_types += more_types
        out_shapes += more_shapes
    return out_types, out_shapes, pack(types_structure, leaves)


def merge_templates(first, second):
    """`first` with each sparse component's dense shape relaxed to fit `second`'s too."""
    shapes = iter([node.shape for _, node in sparse_positions(second)])
    return replace_sparse(first, lambda node: SparseNode(
        None, None, None, most_specific_compatible(node.shape, next(shapes))))


def check_sparse_indices(indices, dense_shape) -> None:
    """InvalidArgumentError unless `indices` are in bounds and in row-major order without
    repeats (what TF's slicing of a sparse batch requires)."""
    if not len(indices):
        return
    outside = np.nonzero(((indices < 0) | (indices >= dense_shape)).any(axis=1))[0]
    if len(outside):
        i = int(outside[0])
        raise errors.InvalidArgumentError(
            None, None, f"indices[{i}] = {list(map(int, indices[i]))} is out of bounds: need "
            f"0 <= index < {list(map(int, dense_shape))}")
    diff = indices[1:] - indices[:-1]
    changed = diff != 0
    first = np.argmax(changed, axis=1)
    step = diff[np.arange(len(diff)), first] if len(diff) else np.zeros(0, np.int64)
    wrong = np.nonzero(~changed.any(axis=1) | (step < 0))[0]
    if len(wrong):
        i = int(wrong[0]) + 1
        what = "is repeated" if not changed[i - 1].any() else "is out of order"
        raise errors.InvalidArgumentError(
            None, None, f"indices[{i}] = {list(map(int, indices[i]))} {what}. Many sparse ops "
            "require sorted indices.\n    Use `tf.sparse.reorder` to create a correctly "
            "ordered copy.")


def split_sparse(triple) -> list:
    """A batched sparse value (indices `[N, 1 + rank]`) -> per row `(indices, values,
    dense_shape)` with the first coordinate dropped and dense shape `dense_shape[1:]`."""
    indices, values, dense_shape = triple
    if dense_shape.shape[0] == 0:
        raise errors.InvalidArgumentError(None, None, "Cannot slice or unbatch a sparse "
                                          "component of rank 0")
    check_sparse_indices(indices, dense_shape)
    rows = int(dense_shape[0])
    inner = dense_shape[1:].astype(np.int64)
    bounds = np.searchsorted(indices[:, 0], np.arange(rows + 1)) if len(indices) else \
        np.zeros(rows + 1, dtype=int)
    return [(np.ascontiguousarray(indices[bounds[i]:bounds[i + 1], 1:], dtype=np.int64),
             values[bounds[i]:bounds[i + 1]], inner.copy()) for i in range(rows)]


def batch_sparse(parts) -> tuple:
    """Per-element `(indices, values, dense_shape)` -> one batched sparse value: the batch
    index is prepended to the indices and the dense shape is `[batch, max of each dim]`."""
    ranks = {len(shape) for _, _, shape in parts}
    if len(ranks) != 1:
        raise errors.InvalidArgumentError(None, None, "Cannot batch sparse components of "
                                          f"different ranks {sorted(ranks)}")
    rank = ranks.pop()
    indices = [np.concatenate([np.full((len(idx), 1), k, dtype=np.int64),
                               np.reshape(idx, (len(idx), rank)).astype(np.int64)], axis=1)
               for k, (idx, _, _) in enumerate(parts)]
    largest = np.max([shape for _, _, shape in parts], axis=0) if rank else \
        np.zeros(0, np.int64)
    return (np.concatenate(indices, axis=0),
            np.concatenate([values for _, values, _ in parts], axis=0),
            np.concatenate([[len(parts)], largest]).astype(np.int64))


def most_specific_compatible(first: TensorShape, second: TensorShape) -> TensorShape:
    if first.ndims is None or second.ndims is None or first.ndims != second.ndims:
        return TensorShape(None)
    return TensorShape([a if a == b else None
                        for a, b in zip(first.as_list(), second.as_list())])


def check_value(value, dtype, shape: TensorShape, where: str) -> np.ndarray:
    """Converts a produced component to `dtype` and checks it against `shape`."""

    array = np.asarray(value) if not isinstance(value, np.ndarray) else value
    if dtype is dtypes.string:
        if array.dtype != object:
            array = as_array(array, dtypes.string)
    elif array.dtype != dtype.as_numpy_dtype:
        try:
            array = as_array(array, dtype)
        except (TypeError, ValueError) as err:
            raise errors.InvalidArgumentError(
                None, None, f"{where}: expected a value of type {dtype.name}, got "
                f"{array.dtype}: {err}") from None
    if not shape.is_compatible_with(array.shape):
        raise errors.InvalidArgumentError(
            None, None, f"{where}: expected a value of shape {shape}, got shape "
            f"{list(array.shape)}")
    return array


def as_shapes(structure, template, what: str):
    """Nested shapes (lists, TensorShapes, None) matching `template` -> flat TensorShapes."""
    if isinstance(template, dict):
        if not isinstance(structure, dict) or sorted(structure) != sorted(template):
            raise ValueError(f"{what} must have the structure of the element: {template}")
        return [shape for key in sorted(template)
                for shape in as_shapes(structure[key], template[key], what)]
    if isinstance(template, tuple):
        if not isinstance(structure, tuple) or len(structure) != len(template):
            raise ValueError(f"{what} must have the structure of the element: {template}")
        return [shape for a, b in zip(structure, template) for shape in as_shapes(a, b, what)]
    return [as_shape(structure)]


__all__: list = []
