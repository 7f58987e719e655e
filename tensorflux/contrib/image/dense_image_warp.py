"""`tf.contrib.image.dense_image_warp` and the bilinear interpolation it samples with, built
from gathers so their gradients (to the image and to the flow) come from the core ops."""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework.scopes import name_scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import dimension_value
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops

__all__ = ["dense_image_warp", "interpolate_bilinear"]


def interpolate_bilinear(grid, query_points, name="interpolate_bilinear", indexing="ij"):
    """Bilinear samples of `grid` at `query_points` (TF 1.15's `_interpolate_bilinear`).

    Points outside the grid are clamped: the lower corner to [0, size - 2] and the blend
    weight to [0, 1], so a point past the edge reads the edge.

    Args:
        grid: [batch, height, width, channels] float (height and width at least 2).
        query_points: [batch, n, 2] points, (row, column) for indexing "ij", (x, y) for "xy".
        name: op name.
        indexing: "ij" or "xy".

    Returns:
        [batch, n, channels] interpolated values.

    Raises:
        ValueError: bad indexing, ranks, or a grid smaller than 2x2.
    """
    if indexing not in ("ij", "xy"):
        raise ValueError(f"Indexing mode must be 'ij' or 'xy', got {indexing!r}")
    with name_scope(name, "interpolate_bilinear", [grid, query_points]):
        grid = convert_to_tensor(grid, name="grid")
        query_points = convert_to_tensor(query_points, name="query_points")
        if grid.shape.ndims != 4:
            raise ValueError(f"Grid must be 4 dimensional. Received size: {grid.shape}")
        if query_points.shape.ndims not in (None, 3) or (
                query_points.shape.ndims == 3
                and dimension_value(query_points.shape[2]) not in (None, 2)):
            raise ValueError(f"query_points must be [batch, n, 2], got shape "
                             f"{query_points.shape}")
        static = [dimension_value(d) for d in grid.shape._dim_list]
        for size, what in ((static[1], "height"), (static[2], "width")):
            if size is not None and size < 2:
                raise ValueError(f"Grid {what} must be at least 2, got shape {grid.shape}")
        dynamic = array_ops.shape(grid)
        batch_size, height, width, channels = (
            s if s is not None else dynamic[i] for i, s in enumerate(static))
        num_queries = array_ops.shape(query_points)[1]
        query_type, grid_type = query_points.dtype.base_dtype, grid.dtype.base_dtype
        alphas, floors, ceils = [], [], []
        unstacked = array_ops.unstack(query_points, axis=2, num=2)
        for dim in ([0, 1] if indexing == "ij" else [1, 0]):
            queries = unstacked[dim]
            size = (height, width)[dim]
            max_floor = math_ops.cast(size - 2, query_type)
            floor = math_ops.minimum(math_ops.maximum(array_ops.constant(0.0, query_type),
                                                      math_ops.floor(queries)), max_floor)
            int_floor = math_ops.cast(floor, dtypes.int32)
            floors.append(int_floor)
            ceils.append(int_floor + 1)
            alpha = math_ops.cast(queries - floor, grid_type)
            alpha = math_ops.minimum(math_ops.maximum(array_ops.constant(0.0, grid_type), alpha),
                                     array_ops.constant(1.0, grid_type))
            alphas.append(array_ops.expand_dims(alpha, 2))
        flattened_grid = array_ops.reshape(grid, array_ops.stack([-1, channels]))
        batch_offsets = array_ops.reshape(math_ops.range(batch_size) * height * width, [-1, 1])

        def gather(y_coords, x_coords):
            linear = batch_offsets + y_coords * width + x_coords
            values = array_ops.gather(flattened_grid, linear)
            return array_ops.reshape(values, array_ops.stack([batch_size, num_queries, channels]))

        top_left = gather(floors[0], floors[1])
        top_right = gather(floors[0], ceils[1])
        bottom_left = gather(ceils[0], floors[1])
        bottom_right = gather(ceils[0], ceils[1])
        interp_top = alphas[1] * (top_right - top_left) + top_left
        interp_bottom = alphas[1] * (bottom_right - bottom_left) + bottom_left
        return alphas[0] * (interp_bottom - interp_top) + interp_top


def dense_image_warp(image, flow, name="dense_image_warp"):
    """Warps images by a per-pixel flow: out[b, i, j] = image[b, i - flow[b, i, j, 0],
    j - flow[b, i, j, 1]] (bilinear, clamped at the borders).

    Args:
        image: [batch, height, width, channels] float.
        flow: [batch, height, width, 2] float, of the image's dtype.
        name: op name.

    Returns:
        [batch, height, width, channels] warped images.

    Raises:
        ValueError: bad ranks or shapes.
    """
    with name_scope(name, "dense_image_warp", [image, flow]):
        image = convert_to_tensor(image, name="image")
        flow = convert_to_tensor(flow, name="flow")
        if image.shape.ndims != 4:
            raise ValueError(f"image must be [batch, height, width, channels], got shape "
                             f"{image.shape}")
        if flow.shape.ndims != 4 or not flow.shape[3:].is_compatible_with([2]):
            raise ValueError(f"flow must be [batch, height, width, 2], got shape {flow.shape}")
        shape = array_ops.shape(image)
        batch_size, height, width, channels = shape[0], shape[1], shape[2], shape[3]
        grid_x, grid_y = array_ops.meshgrid(math_ops.range(width), math_ops.range(height))
        stacked_grid = math_ops.cast(array_ops.stack([grid_y, grid_x], axis=2),
                                     flow.dtype.base_dtype)
        query_points = array_ops.expand_dims(stacked_grid, axis=0) - flow
        query_points = array_ops.reshape(query_points,
                                         array_ops.stack([batch_size, height * width, 2]))
        interpolated = interpolate_bilinear(image, query_points)
        out = array_ops.reshape(interpolated,
                                array_ops.stack([batch_size, height, width, channels]))
        out.set_shape(image.shape)
        return out
