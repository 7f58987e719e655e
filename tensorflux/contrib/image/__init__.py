"""`tf.contrib.image`: projective transforms (transform, rotate, translate and the transform
helpers), dense and sparse image warping, spline interpolation and YIQ color adjustment. The
other TF 1.15 names raise ContribNotProvidedError."""

from tensorflux.contrib import missing as _missing
from tensorflux.contrib.image.dense_image_warp import dense_image_warp, interpolate_bilinear
from tensorflux.contrib.image.interpolate_spline import interpolate_spline
from tensorflux.contrib.image.sparse_image_warp import sparse_image_warp
from tensorflux.contrib.image.yiq import adjust_hsv_in_yiq, random_yiq_hsv
from tensorflux.contrib.image.transforms import (angles_to_projective_transforms,
                                                 compose_transforms, flat_transforms_to_matrices,
                                                 matrices_to_flat_transforms, rotate, transform,
                                                 translate, translations_to_projective_transforms)

__all__ = ["transform", "rotate", "translate", "angles_to_projective_transforms",
           "translations_to_projective_transforms", "compose_transforms",
           "flat_transforms_to_matrices", "matrices_to_flat_transforms", "dense_image_warp",
           "interpolate_bilinear", "interpolate_spline", "sparse_image_warp",
           "adjust_hsv_in_yiq", "random_yiq_hsv"]

__getattr__ = _missing.module_getattr("contrib.image", {
    "connected_components": "not supported",
    "bipartite_match": "not supported",
    "single_image_random_dot_stereograms": "not supported",
    "*": "tf.image",
})
