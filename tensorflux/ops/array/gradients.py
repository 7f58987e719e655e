"""Gradients of the array ops (they build graph with the public wrappers)."""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.ops.array import concat_split as C
from tensorflux.ops.array import constants as A
from tensorflux.ops.array import diagonal as D
from tensorflux.ops.array import gather_scatter as G
from tensorflux.ops.array import padding as PD
from tensorflux.ops.array import partition as P
from tensorflux.ops.array import shapes as SH
from tensorflux.ops.array import slicing as S


def _dense(grad):
    return convert_to_tensor(grad) if isinstance(grad, IndexedSlices) else grad


def _shape_of(x):
    """The shape of `x` as a constant when static, else a Shape op."""
    return SH.shape(x)


def _reshape_to(grad, x):
    grad = _dense(grad)
    if x.shape.is_fully_defined():
        return SH.reshape(grad, x.shape.as_list())
    return SH.reshape(grad, SH.shape(x))


# -- identity-like ------------------------------------------------------------------------------

@A.Identity.gradient
def _identity_grad(op, grad):
    return grad


@A.PlaceholderWithDefault.gradient
def _placeholder_with_default_grad(op, grad):
    return grad


@A.IdentityN.gradient
def _identity_n_grad(op, *grads):
    return list(grads)


@A.EnsureShape.gradient
def _ensure_shape_grad(op, grad):
    return grad


@A.PreventGradient.gradient
def _prevent_gradient_grad(op, grad):
    raise LookupError(f"Gradient explicitly disabled. Reason: {op.get_attr('message')}")


# -- reshaping ----------------------------------------------------------------------------------

@SH.Reshape.gradient
def _reshape_grad(op, grad):
    return [_reshape_to(grad, op.inputs[0]), None]


@SH.ExpandDims.gradient
def _expand_dims_grad(op, grad):
    return [_reshape_to(grad, op.inputs[0]), None]


@SH.Squeeze.gradient
def _squeeze_grad(op, grad):
    return _reshape_to(grad, op.inputs[0])


def _transpose_grad_common(op, grad, conjugate):
    perm = op.inputs[1]
    value = constant_value(perm)
    if value is not None:
        inverse = [0] * len(value)
        for i, p in enumerate(value.tolist()):
            inverse[p % len(value)] = i
    else:
        inverse = SH.invert_permutation(perm)
    return [SH.transpose(grad, inverse, conjugate=conjugate), None]


@SH.Transpose.gradient
def _transpose_grad(op, grad):
    return _transpose_grad_common(op, grad, False)


@SH.ConjugateTranspose.gradient
def _conjugate_transpose_grad(op, grad):
    return _transpose_grad_common(op, grad, True)


@A.Fill.gradient
def _fill_grad(op, grad):
    from tensorflux.ops.math.reduction import reduce_sum

    return [None, reduce_sum(grad)]


@SH.BroadcastTo.gradient
def _broadcast_to_grad(op, grad):
    from tensorflux.ops.math.broadcast_gradient import unbroadcast

    return [unbroadcast(grad, op.inputs[0]), None]


# -- concat, split, stack ------------------------------------------------------------------------

@C.ConcatV2.gradient
def _concat_grad(op, grad):
    values = op.inputs[:-1]
    axis = op.inputs[-1]
    grad = _dense(grad)
    axis_value = constant_value(axis)
    if axis_value is not None and all(v.shape.ndims is not None for v in values):
        rank = values[0].shape.ndims
        a = int(axis_value) % rank
        sizes = [v.shape.dims[a] for v in values]
        if None not in sizes:
            return C.split(grad, sizes, a) + [None]
    shapes = SH.shape_n(values)
    axis = axis if axis.dtype.base_dtype == dtypes.int32 else _cast(axis, dtypes.int32)
    offsets = C.ConcatOffset(axis, shapes)
    return [S.slice(grad, o, s) for o, s in zip(offsets, shapes)] + [None]


def _cast(x, dtype):
    from tensorflux.ops.math.casting import cast

    return cast(x, dtype)


@C.Split.gradient
def _split_grad(op, *grads):
    return [None, C.concat(list(grads), op.inputs[0])]


@C.SplitV.gradient
def _split_v_grad(op, *grads):
    return [C.concat(list(grads), op.inputs[2]), None, None]


@C.Pack.gradient
def _pack_grad(op, grad):
    return C.unstack(_dense(grad), num=op.get_attr("N"), axis=op.get_attr("axis"))


@C.Unpack.gradient
def _unpack_grad(op, *grads):
    return C.stack(list(grads), axis=op.get_attr("axis"))


# -- tile, pad, reverse ----------------------------------------------------------------------

@PD.Tile.gradient
def _tile_grad(op, grad):
    from tensorflux.ops.math.reduction import reduce_sum

    x = op.inputs[0]
    grad = _dense(grad)
    multiples = op.inputs[1]
    if x.shape.is_fully_defined() and constant_value(multiples) is not None:
        dims = x.shape.as_list()
        split = []
        for m, d in zip(constant_value(multiples).tolist(), dims):
            split += [m, d]
    else:
        x_shape = SH.shape(x, out_type=multiples.dtype)
        split = SH.reshape(SH.transpose(C.stack([multiples, x_shape])), [-1])
    rank = x.shape.ndims
    if rank is None and multiples.shape.ndims == 1:
        rank = multiples.shape.dims[0]
    if rank is not None:
        axes = list(range(0, 2 * rank, 2))
    else:
        from tensorflux.ops import math as math_ops

        axes = math_ops.range(0, SH.size(split), 2)
    summed = reduce_sum(SH.reshape(grad, split), axis=axes)
    return [_reshape_to(summed, x), None]


def _pad_grad_common(op, grad):
    x = op.inputs[0]
    paddings = op.inputs[1]
    grad = _dense(grad)
    begin = SH.reshape(S.slice(paddings, [0, 0], [-1, 1]), [-1])
    return S.slice(grad, begin, SH.shape(x, out_type=begin.dtype))


@PD.Pad.gradient
def _pad_grad(op, grad):
    return [_pad_grad_common(op, grad), None]


@PD.PadV2.gradient
def _pad_v2_grad(op, grad):
    return [_pad_grad_common(op, grad), None, None]


@PD.MirrorPad.gradient
def _mirror_pad_grad(op, grad):
    return [PD.MirrorPadGrad(_dense(grad), op.inputs[1], mode=op.get_attr("mode")), None]


@PD.MirrorPadGrad.gradient
def _mirror_pad_grad_grad(op, grad):
    return [PD.MirrorPad(grad, op.inputs[1], mode=op.get_attr("mode")), None]


@PD.ReverseV2.gradient
def _reverse_grad(op, grad):
    return [PD.reverse(_dense(grad), op.inputs[1]), None]


@PD.ReverseSequence.gradient
def _reverse_sequence_grad(op, grad):
    return [PD.ReverseSequence(_dense(grad), op.inputs[1], seq_dim=op.get_attr("seq_dim"),
                              batch_dim=op.get_attr("batch_dim")), None]


# -- slicing --------------------------------------------------------------------------------

@S.Slice.gradient
def _slice_grad(op, grad):
    x, begin, _ = op.inputs
    y = op.outputs[0]
    grad = _dense(grad)
    x_shape = SH.shape(x, out_type=begin.dtype)
    y_shape = SH.shape(y, out_type=begin.dtype)
    from tensorflux.ops.math.binary import subtract

    after = subtract(subtract(x_shape, y_shape), begin)
    paddings = SH.transpose(C.stack([begin, after]))
    return [PD.pad(grad, paddings), None, None]


def _masks(op) -> dict:
    return {k: op.get_attr(k) for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                        "new_axis_mask", "shrink_axis_mask")}


@S.StridedSlice.gradient
def _strided_slice_grad(op, grad):
    x, begin, end, strides = op.inputs
    shape = SH.shape(x, out_type=begin.dtype)
    return [S.StridedSliceGrad(shape, begin, end, strides, _dense(grad), **_masks(op)),
            None, None, None]


@S.StridedSliceGrad.gradient
def _strided_slice_grad_grad(op, grad):
    _, begin, end, strides, _ = op.inputs
    return [None, None, None, None,
            S.strided_slice(_dense(grad), begin, end, strides, **_masks(op))]


# -- gather and scatter -------------------------------------------------------------------------

def _gather_axis0_grad(params, indices, grad):
    # NOTE: the shape is read where params live (a sharded embedding's shard on a ps task),
    # so only its shape, not the table, crosses the network.
    with params.graph.colocate_with(params):
        params_shape = SH.shape(params)
    if params.shape.ndims is not None and params.shape[1:].is_fully_defined():
        values_shape = [-1] + params.shape.as_list()[1:]
    else:
        values_shape = C.concat([[-1], S.strided_slice(params_shape, [1], [0], [1],
                                                       end_mask=1)], 0)
    values = SH.reshape(_dense(grad), values_shape)
    flat_indices = SH.reshape(indices, [-1])
    return IndexedSlices(values, flat_indices, params_shape)


@G.Gather.gradient
def _gather_grad(op, grad):
    params, indices = op.inputs
    return [_gather_axis0_grad(params, indices, grad), None]


@G.GatherV2.gradient
def _gather_v2_grad(op, grad):
    params, indices, axis = op.inputs
    batch_dims = op.get_attr("batch_dims")
    axis_value = constant_value(axis)
    if axis_value is None:
        raise ValueError(f"GatherV2 gradient of '{op.name}' needs a constant axis")
    axis_value = int(axis_value)
    if axis_value == 0 and batch_dims == 0:
        return [_gather_axis0_grad(params, indices, grad), None, None]
    rank = params.shape.ndims
    if rank is None or indices.shape.ndims is None:
        raise ValueError(f"GatherV2 gradient of '{op.name}' needs params and indices of "
                         "known rank")
    if axis_value < 0:
        axis_value += rank
    if batch_dims < 0:
        batch_dims += indices.shape.ndims
    return [_scatter_along_axis(params, indices, _dense(grad), axis_value, batch_dims),
            None, None]


def _scatter_along_axis(params, indices, grad, axis: int, batch_dims: int):
    """Sums `grad` (the output gradient of gather(params, indices, axis, batch_dims)) back
    into the shape of `params`, with ScatterNd."""
    rank = params.shape.ndims
    m = indices.shape.ndims - batch_dims
    k = axis - batch_dims
    # grad: [batch..., pre(k)..., irest(m)..., post...] -> [batch..., irest..., pre..., post...]
    perm = (list(range(batch_dims)) + list(range(batch_dims + k, batch_dims + k + m))
            + list(range(batch_dims, batch_dims + k))
            + list(range(batch_dims + k + m, batch_dims + k + m + rank - axis - 1)))
    moved = SH.transpose(grad, perm)
    params_shape = SH.shape(params, out_type=indices.dtype)
    index_parts = [SH.expand_dims(indices, -1)]
    if batch_dims:
        from tensorflux.ops import math as math_ops

        batch_coords = []
        index_shape = SH.shape(indices, out_type=indices.dtype)
        for b in range(batch_dims):
            size = index_shape[b]
            coord_shape = [1] * indices.shape.ndims
            coord_shape[b] = -1
            coord = SH.reshape(math_ops.range(0, size, 1, dtype=indices.dtype), coord_shape)
            batch_coords.append(SH.expand_dims(SH.broadcast_to(coord, index_shape), -1))
        index_parts = batch_coords + index_parts
    coords = C.concat(index_parts, -1) if len(index_parts) > 1 else index_parts[0]
    # Scatter into [batch..., N, pre..., post...] then move N back to position `axis`.
    order = list(range(batch_dims)) + [axis] + list(range(batch_dims, axis)) + \
        list(range(axis + 1, rank))
    target = C.stack([params_shape[i] for i in order])
    scattered = G.scatter_nd(coords, moved, target)
    inverse = [0] * rank
    for i, p in enumerate(order):
        inverse[p] = i
    return SH.transpose(scattered, inverse)


@G.GatherNd.gradient
def _gather_nd_grad(op, grad):
    params, indices = op.inputs
    shape = SH.shape(params, out_type=indices.dtype)
    return [G.scatter_nd(indices, _dense(grad), shape), None]


@G.ScatterNd.gradient
def _scatter_nd_grad(op, grad):
    indices = op.inputs[0]
    return [None, G.gather_nd(_dense(grad), indices), None]


# -- partition and stitch -----------------------------------------------------------------------

@P.DynamicPartition.gradient
def _dynamic_partition_grad(op, *grads):
    from tensorflux.ops import math as math_ops

    data, partitions = op.inputs
    num = op.get_attr("num_partitions")
    original = SH.reshape(math_ops.range(0, SH.size(partitions), 1), SH.shape(partitions))
    positions = P.dynamic_partition(original, partitions, num)
    stitched = P.dynamic_stitch(positions, [_dense(g) for g in grads])
    return [_reshape_to(stitched, data), None]


def _stitch_grad(op, grad):
    n = op.get_attr("N")
    indices = op.inputs[:n]
    grad = _dense(grad)
    return [None] * n + [G.gather(grad, i) for i in indices]


P.DynamicStitch.gradient(_stitch_grad)
P.ParallelDynamicStitch.gradient(_stitch_grad)


# -- diagonals ------------------------------------------------------------------------------------

@D.MatrixBandPart.gradient
def _matrix_band_part_grad(op, grad):
    return [D.matrix_band_part(_dense(grad), op.inputs[1], op.inputs[2]), None, None]


@D.Diag.gradient
def _diag_grad(op, grad):
    return D.diag_part(grad)


@D.DiagPart.gradient
def _diag_part_grad(op, grad):
    return D.diag(grad)


@D.MatrixDiag.gradient
def _matrix_diag_grad(op, grad):
    return D.matrix_diag_part(grad)


@D.MatrixDiagPart.gradient
def _matrix_diag_part_grad(op, grad):
    x = op.inputs[0]
    if x.shape.is_fully_defined() and x.shape.dims[-1] == x.shape.dims[-2]:
        return D.matrix_diag(grad)
    return D.matrix_set_diag(A.zeros_like(x), grad)


@D.MatrixSetDiag.gradient
def _matrix_set_diag_grad(op, grad):
    grad = _dense(grad)
    return [D.matrix_set_diag(grad, A.zeros_like(op.inputs[1])), D.matrix_diag_part(grad)]


@D.SpaceToDepth.gradient
def _space_to_depth_grad(op, grad):
    return D.depth_to_space(grad, op.get_attr("block_size"),
                            data_format=op.get_attr("data_format"))


@D.DepthToSpace.gradient
def _depth_to_space_grad(op, grad):
    return D.space_to_depth(grad, op.get_attr("block_size"),
                            data_format=op.get_attr("data_format"))
