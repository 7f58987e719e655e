"""`tf.image`: resizing, color adjustments, geometry and codecs under their TF1 names."""

from tensorflux.ops.image.jpeg_ops import (adjust_jpeg_quality, decode_and_crop_jpeg,
                                            random_jpeg_quality)
from tensorflux.ops.image.codecs import (
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
    extract_jpeg_shape,
    is_jpeg,
)
from tensorflux.ops.image.color import (
    adjust_brightness,
    adjust_contrast,
    adjust_gamma,
    adjust_hue,
    adjust_saturation,
    convert_image_dtype,
    grayscale_to_rgb,
    hsv_to_rgb,
    per_image_standardization,
    random_brightness,
    random_contrast,
    random_hue,
    random_saturation,
    rgb_to_grayscale,
    rgb_to_hsv,
)
from tensorflux.ops.image.geometry import (
    central_crop,
    crop_to_bounding_box,
    flip_left_right,
    flip_up_down,
    pad_to_bounding_box,
    random_crop,
    random_flip_left_right,
    random_flip_up_down,
    resize_image_with_crop_or_pad,
    resize_image_with_pad,
    resize_with_crop_or_pad,
    rot90,
    transpose,
    transpose_image,
)
from tensorflux.ops.image.resize import (
    ResizeMethod,
    resize_area,
    resize_bicubic,
    resize_bilinear,
    resize_images,
    resize_nearest_neighbor,
)
from tensorflux.ops.image.boxes import draw_bounding_boxes, sample_distorted_bounding_box
from tensorflux.ops.image.crop import crop_and_resize, extract_glimpse
from tensorflux.ops.image.quality import (
    image_gradients,
    psnr,
    rgb_to_yiq,
    rgb_to_yuv,
    sobel_edges,
    ssim,
    ssim_multiscale,
    total_variation,
    yiq_to_rgb,
    yuv_to_rgb,
)
from tensorflux.ops.image.nms import (
    combined_non_max_suppression,
    non_max_suppression,
    non_max_suppression_overlaps,
    non_max_suppression_padded,
    non_max_suppression_with_scores,
)
from tensorflux.ops.image.patches import extract_image_patches, extract_patches

resize = resize_images

__all__ = [
    "ResizeMethod", "adjust_brightness", "adjust_contrast", "adjust_gamma", "adjust_hue",
    "adjust_saturation", "central_crop", "convert_image_dtype", "crop_to_bounding_box",
    "decode_bmp", "decode_gif", "decode_image", "decode_jpeg", "decode_png", "encode_jpeg",
    "encode_png", "flip_left_right", "flip_up_down", "grayscale_to_rgb", "hsv_to_rgb",
    "is_jpeg", "pad_to_bounding_box", "per_image_standardization", "random_brightness",
    "random_contrast", "random_crop", "random_flip_left_right", "random_flip_up_down",
    "random_hue", "random_saturation", "resize", "resize_area", "resize_bicubic",
    "resize_bilinear", "resize_image_with_crop_or_pad", "resize_image_with_pad",
    "resize_images", "resize_nearest_neighbor", "resize_with_crop_or_pad", "rgb_to_grayscale",
    "rgb_to_hsv", "rot90", "transpose", "transpose_image",
]
__all__ += [
    "crop_and_resize", "extract_image_patches", "extract_patches", "image_gradients",
    "non_max_suppression", "non_max_suppression_overlaps", "non_max_suppression_padded",
    "non_max_suppression_with_scores", "psnr", "rgb_to_yiq", "rgb_to_yuv", "sobel_edges", "ssim",
    "ssim_multiscale", "total_variation", "yiq_to_rgb", "yuv_to_rgb", "draw_bounding_boxes",
    "sample_distorted_bounding_box", "combined_non_max_suppression", "extract_glimpse",
    "extract_jpeg_shape",
]
__all__ += ["adjust_jpeg_quality", "decode_and_crop_jpeg", "random_jpeg_quality"]
