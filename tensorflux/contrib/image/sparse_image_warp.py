"""`tf.contrib.image.sparse_image_warp` (TF 1.15): warp images so that source control points
move to destination control points, the dense flow between them a polyharmonic spline."""

from __future__ import annotations

import numpy as np

from tensorflux.contrib.image.dense_image_warp import dense_image_warp
from tensorflux.contrib.image.interpolate_spline import interpolate_spline
from tensorflux.framework.scopes import name_scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops

__all__ = ["sparse_image_warp"]


def _grid_locations(height: int, width: int) -> np.ndarray:
    """[height * width, 2] (row, column) of every pixel."""
    ys, xs = np.meshgrid(np.arange(height, dtype=np.float64), np.arange(width, dtype=np.float64),
                         indexing="ij")
    return np.stack([ys, xs], -1).reshape(-1, 2)


def _boundary_locations(height: int, width: int, points_per_edge: int) -> np.ndarray:
    """[p, 2] points spread along the image border, corners included."""
    y_range = np.linspace(0, height - 1, points_per_edge + 2)
    x_range = np.linspace(0, width - 1, points_per_edge + 2)
    ys, xs = np.meshgrid(y_range, x_range, indexing="ij")
    on_edge = (xs == 0) | (xs == width - 1) | (ys == 0) | (ys == height - 1)
    return np.stack([ys[on_edge], xs[on_edge]], -1)


def _batched(points: np.ndarray, batch_size: int, dtype):
    return array_ops.constant(np.broadcast_to(points, (batch_size, *points.shape)).copy(),
                              dtype=dtype)


def sparse_image_warp(image, source_control_point_locations, dest_control_point_locations,
                      interpolation_order=2, regularization_weight=0.0, num_boundary_points=0,
                      name="sparse_image_warp"):
    """Warps `image` so each source control point lands on its destination.

    Args:
        image: [batch, height, width, channels] float images (static shape).
        source_control_point_locations: [batch, n, 2] (row, column) points.
        dest_control_point_locations: [batch, n, 2] where those points go.
        interpolation_order: the spline order of the flow (2: thin plate).
        regularization_weight: the spline's smoothing (0 interpolates exactly).
        num_boundary_points: > 0 pins that many points per edge (plus corners) to zero flow.
        name: op name.

    Returns:
        (warped_image [batch, height, width, channels], dense_flows [batch, height, width, 2]).

    Raises:
        ValueError: image of unknown shape, or bad control point shapes.
    """
    with name_scope(name, "sparse_image_warp"):
        image = convert_to_tensor(image, name="image")
        dtype = image.dtype.base_dtype
        source = convert_to_tensor(source_control_point_locations, dtype=dtype,
                                   name="source_control_point_locations")
        dest = convert_to_tensor(dest_control_point_locations, dtype=dtype,
                                 name="dest_control_point_locations")
        if image.shape.ndims != 4 or not image.shape.is_fully_defined():
            raise ValueError(f"image must be [batch, height, width, channels] with a static "
                             f"shape, got {image.shape}")
        batch, height, width, _ = image.shape.as_list()
        flows = dest - source
        if num_boundary_points > 0:
            boundary = _boundary_locations(height, width, num_boundary_points - 1)
            dest = array_ops.concat([dest, _batched(boundary, batch, dtype)], 1)
            flows = array_ops.concat([flows, _batched(np.zeros_like(boundary), batch, dtype)], 1)
        grid = _batched(_grid_locations(height, width), batch, dtype)
        dense = interpolate_spline(dest, flows, grid, interpolation_order,
                                   regularization_weight)
        dense_flows = array_ops.reshape(dense, [batch, height, width, 2])
        return dense_image_warp(image, dense_flows), dense_flows
