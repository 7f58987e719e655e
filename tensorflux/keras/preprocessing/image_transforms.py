"""Image augmentation transforms of `tf.keras.preprocessing.image` on NumPy arrays: affine
transforms (rotation, shift, shear, zoom), channel and brightness shifts, flips, and the PIL
conversions (`array_to_img`, `img_to_array`, `load_img`, `save_img`).

Affine transforms use SciPy's `ndimage.affine_transform` (spline order 0-5) when SciPy is
installed, as Keras does; without SciPy a NumPy path does orders 0 and 1 with the same fill
modes ('nearest', 'constant', 'reflect', 'wrap'). PIL is needed only to read, write and
convert images (and, when present, for the brightness shift, as in Keras).
"""

from __future__ import annotations

import numpy as np

__all__ = ["apply_affine_transform", "apply_brightness_shift", "apply_channel_shift",
           "flip_axis", "random_rotation", "random_shift", "random_shear", "random_zoom",
           "random_channel_shift", "random_brightness", "transform_matrix_offset_center",
           "array_to_img", "img_to_array", "load_img", "save_img"]

_FILL_MODES = ("nearest", "constant", "reflect", "wrap")


def _scipy_ndimage():
    try:
        from scipy import ndimage
    except ImportError:
        return None
    return ndimage


def _pil_image():
    try:
        from PIL import Image
    except ImportError:
        return None
    return Image


def _require_pil(what):
    image = _pil_image()
    if image is None:
        raise ImportError(f"Could not import PIL.Image. The use of `{what}` requires PIL "
                          f"(pip install pillow).")
    return image


def transform_matrix_offset_center(matrix, x, y):
    """`matrix` (3x3, homogeneous) applied about the centre of an `x` by `y` image."""
    o_x, o_y = float(x) / 2 + 0.5, float(y) / 2 + 0.5
    offset = np.array([[1, 0, o_x], [0, 1, o_y], [0, 0, 1]])
    reset = np.array([[1, 0, -o_x], [0, 1, -o_y], [0, 0, 1]])
    return offset @ matrix @ reset


def _fold(index, n, mode):
    """Integer sample positions folded into [0, n) by the fill mode."""
    if mode == "reflect":   # d c b a | a b c d | d c b a
        period = np.mod(index, 2 * n)
        return np.where(period >= n, 2 * n - 1 - period, period)
    return np.clip(index, 0, n - 1)


def _fold_coordinate(coord, n, mode):
    """A continuous sample coordinate moved into the input by the fill mode, as SciPy's
    ndimage does before interpolating ('wrap': the first and last samples coincide)."""
    if mode == "reflect":
        folded = np.mod(coord + 0.5, 2 * n) - 0.5
        return np.where(folded > n - 0.5, 2 * n - 1 - folded, folded)
    if mode == "wrap" and n > 1:
        outside = (coord < 0) | (coord > n - 1)
        return np.where(outside, np.mod(coord, n - 1), coord)
    if mode == "wrap":
        return np.zeros_like(coord)
    return coord


def _affine_numpy(image, matrix, offset, order, mode, cval):
    """output[o] = image[matrix @ o + offset] for one 2-D channel, order 0 or 1."""
    rows, cols = image.shape
    grid_r, grid_c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    raw_r = matrix[0, 0] * grid_r + matrix[0, 1] * grid_c + offset[0]
    raw_c = matrix[1, 0] * grid_r + matrix[1, 1] * grid_c + offset[1]
    src_r, src_c = _fold_coordinate(raw_r, rows, mode), _fold_coordinate(raw_c, cols, mode)
    if order == 0:
        r0 = np.floor(src_r + 0.5).astype(np.int64)
        c0 = np.floor(src_c + 0.5).astype(np.int64)
        out = image[_fold(r0, rows, mode), _fold(c0, cols, mode)].astype(np.float64)
    else:
        r0, c0 = np.floor(src_r).astype(np.int64), np.floor(src_c).astype(np.int64)
        fr, fc = src_r - r0, src_c - c0
        out = np.zeros(image.shape, np.float64)
        for dr, wr in ((0, 1 - fr), (1, fr)):
            for dc, wc in ((0, 1 - fc), (1, fc)):
                sample = image[_fold(r0 + dr, rows, mode), _fold(c0 + dc, cols, mode)]
                out += wr * wc * sample
    if mode == "constant":
        eps = 1e-9
        outside = (raw_r < -eps) | (raw_r > rows - 1 + eps) | (raw_c < -eps) | \
            (raw_c > cols - 1 + eps)
        out[outside] = cval
    return out.astype(image.dtype, copy=False)


def apply_affine_transform(x, theta=0, tx=0, ty=0, shear=0, zx=1, zy=1, row_axis=0,
                           col_axis=1, channel_axis=2, fill_mode="nearest", cval=0.0, order=1):
    """`x` (one image) rotated by `theta` degrees, shifted by (tx, ty) pixels, sheared by
    `shear` degrees and zoomed by (zx, zy), about the image centre.

    Raises:
        ValueError: an unknown `fill_mode`, or an interpolation order the NumPy path lacks.
    """
    if fill_mode not in _FILL_MODES:
        raise ValueError(f"fill_mode must be one of {_FILL_MODES}, got {fill_mode!r}")
    transform = None

    def compose(matrix):
        nonlocal transform
        transform = matrix if transform is None else transform @ matrix

    if theta != 0:
        t = np.deg2rad(theta)
        compose(np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0], [0, 0, 1]]))
    if tx != 0 or ty != 0:
        compose(np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]]))
    if shear != 0:
        s = np.deg2rad(shear)
        compose(np.array([[1, -np.sin(s), 0], [0, np.cos(s), 0], [0, 0, 1]]))
    if zx != 1 or zy != 1:
        compose(np.array([[zx, 0, 0], [0, zy, 0], [0, 0, 1]]))
    if transform is None:
        return x
    h, w = x.shape[row_axis], x.shape[col_axis]
    transform = transform_matrix_offset_center(transform, h, w)
    channels = np.rollaxis(x, channel_axis, 0)
    matrix, offset = transform[:2, :2], transform[:2, 2]
    ndimage = _scipy_ndimage()
    if ndimage is not None:
        out = [ndimage.affine_transform(c, matrix, offset, order=order, mode=fill_mode,
                                        cval=cval) for c in channels]
    else:
        if order not in (0, 1):
            raise ValueError(f"interpolation order {order} needs SciPy (the NumPy path does "
                             f"orders 0 and 1)")
        out = [_affine_numpy(c, matrix, offset, order, fill_mode, cval) for c in channels]
    return np.rollaxis(np.stack(out, axis=0), 0, channel_axis + 1)


def apply_channel_shift(x, intensity, channel_axis=0):
    """Adds `intensity` to every channel, clipped to the image's [min, max]."""
    x = np.rollaxis(x, channel_axis, 0)
    low, high = np.min(x), np.max(x)
    out = np.stack([np.clip(c + intensity, low, high) for c in x], axis=0)
    return np.rollaxis(out, 0, channel_axis + 1)


def flip_axis(x, axis):
    """`x` reversed along `axis`."""
    return np.flip(np.asarray(x), axis)


def _scaled_uint8(x):
    """`x` shifted to start at 0 and scaled to [0, 255], as `array_to_img(scale=True)`."""
    x = np.asarray(x, dtype=np.float64)
    x = x + max(-np.min(x), 0)
    peak = np.max(x)
    if peak != 0:
        x = x / peak
    return (x * 255).astype(np.uint8)


def apply_brightness_shift(x, brightness):
    """`x` rescaled to [0, 255] and its brightness multiplied by `brightness` (PIL's
    ImageEnhance.Brightness when PIL is installed; the same blend in NumPy otherwise)."""
    pil = _pil_image()
    if pil is not None and np.asarray(x).ndim == 3 and np.asarray(x).shape[-1] in (1, 3, 4):
        from PIL import ImageEnhance
        img = array_to_img(x)
        return img_to_array(ImageEnhance.Brightness(img).enhance(brightness))
    scaled = _scaled_uint8(x).astype(np.float64)
    return np.clip(scaled * brightness, 0, 255).astype(np.uint8).astype(np.float32)


def random_rotation(x, rg, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest",
                    cval=0.0, interpolation_order=1):
    """`x` rotated by a uniform random angle in [-rg, rg] degrees."""
    theta = np.random.uniform(-rg, rg)
    return apply_affine_transform(x, theta=theta, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval,
                                  order=interpolation_order)


def random_shift(x, wrg, hrg, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest",
                 cval=0.0, interpolation_order=1):
    """`x` shifted by random fractions (of its height and width) in [-hrg, hrg], [-wrg, wrg]."""
    h, w = x.shape[row_axis], x.shape[col_axis]
    tx = np.random.uniform(-hrg, hrg) * h
    ty = np.random.uniform(-wrg, wrg) * w
    return apply_affine_transform(x, tx=tx, ty=ty, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval,
                                  order=interpolation_order)


def random_shear(x, intensity, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest",
                 cval=0.0, interpolation_order=1):
    """`x` sheared by a uniform random angle in [-intensity, intensity] degrees."""
    shear = np.random.uniform(-intensity, intensity)
    return apply_affine_transform(x, shear=shear, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval,
                                  order=interpolation_order)


def random_zoom(x, zoom_range, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest",
                cval=0.0, interpolation_order=1):
    """`x` zoomed by random factors drawn from `zoom_range` (a pair) on each axis.

    Raises:
        ValueError: `zoom_range` is not a pair.
    """
    if len(zoom_range) != 2:
        raise ValueError(f"`zoom_range` should be a tuple or list of two floats. Received: "
                         f"{zoom_range}")
    if zoom_range[0] == 1 and zoom_range[1] == 1:
        zx, zy = 1, 1
    else:
        zx, zy = np.random.uniform(zoom_range[0], zoom_range[1], 2)
    return apply_affine_transform(x, zx=zx, zy=zy, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval,
                                  order=interpolation_order)


def random_channel_shift(x, intensity_range, channel_axis=0):
    """`apply_channel_shift` by a uniform random intensity in [-range, range]."""
    return apply_channel_shift(x, np.random.uniform(-intensity_range, intensity_range),
                               channel_axis)


def random_brightness(x, brightness_range):
    """`apply_brightness_shift` by a uniform random factor from `brightness_range` (a pair).

    Raises:
        ValueError: `brightness_range` is not a pair.
    """
    if len(brightness_range) != 2:
        raise ValueError(f"`brightness_range should be tuple or list of two floats. Received: "
                         f"{brightness_range}")
    return apply_brightness_shift(x, np.random.uniform(brightness_range[0],
                                                       brightness_range[1]))


def _data_format(data_format):
    if data_format is None:
        # cycle: the backend imports the op families; preprocessing stays importable alone
        from tensorflux.keras import backend
        data_format = backend.image_data_format()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Unknown data_format: {data_format}")
    return data_format


def img_to_array(img, data_format=None, dtype="float32"):
    """A PIL image (or array) as a 3-D array in `data_format`.

    Raises:
        ValueError: an image that is not 2-D or 3-D.
    """
    data_format = _data_format(data_format)
    x = np.asarray(img, dtype=dtype)
    if x.ndim == 3:
        return x.transpose(2, 0, 1) if data_format == "channels_first" else x
    if x.ndim == 2:
        return x[np.newaxis] if data_format == "channels_first" else x[..., np.newaxis]
    raise ValueError(f"Unsupported image shape: {x.shape}")


def array_to_img(x, data_format=None, scale=True, dtype="float32"):
    """A 3-D array as a PIL image ('L', 'RGB' or 'RGBA' from 1, 3 or 4 channels).

    Raises:
        ImportError: PIL is missing. ValueError: not a 3-D array, or another channel count.
    """
    image = _require_pil("array_to_img")
    x = np.asarray(x, dtype=dtype)
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array "
                         f"with shape: {x.shape}")
    if _data_format(data_format) == "channels_first":
        x = x.transpose(1, 2, 0)
    x = _scaled_uint8(x) if scale else x
    channels = x.shape[2]
    if channels == 4:
        return image.fromarray(x.astype("uint8"), "RGBA")
    if channels == 3:
        return image.fromarray(x.astype("uint8"), "RGB")
    if channels == 1:
        if np.max(x) > 255:
            return image.fromarray(x[:, :, 0].astype("int32"), "I")
        return image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {channels}")


_INTERPOLATIONS = ("nearest", "bilinear", "bicubic", "hamming", "box", "lanczos")


def load_img(path, grayscale=False, color_mode="rgb", target_size=None,
             interpolation="nearest"):
    """The image file at `path` as a PIL image, converted to `color_mode` ('grayscale',
    'rgb', 'rgba') and resized to `target_size` (height, width).

    Raises:
        ImportError: PIL is missing. ValueError: an unknown color mode or interpolation.
    """
    image = _require_pil("load_img")
    if grayscale:
        color_mode = "grayscale"
    modes = {"grayscale": "L", "rgba": "RGBA", "rgb": "RGB"}
    if color_mode not in modes:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    with open(path, "rb") as f:
        img = image.open(f)
        img.load()
    if img.mode != modes[color_mode]:
        img = img.convert(modes[color_mode])
    if target_size is not None:
        size = (target_size[1], target_size[0])
        if img.size != size:
            if interpolation not in _INTERPOLATIONS:
                raise ValueError(f"Invalid interpolation method {interpolation!r} specified. "
                                 f"Supported methods are {', '.join(_INTERPOLATIONS)}")
            resample = getattr(image.Resampling, interpolation.upper())
            img = img.resize(size, resample)
    return img


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Writes the 3-D array `x` as an image file (format from `file_format` or the name)."""
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and (file_format == "jpg" or file_format == "jpeg"
                               or str(path).lower().endswith((".jpg", ".jpeg"))):
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)
