"""Image codecs: DecodePng/EncodePng (built in), DecodeJpeg/EncodeJpeg, DecodeGif, DecodeBmp
(through Pillow, an optional dependency) and DecodeImage, which sniffs the format.

As in TensorFlow 1.x, DecodePng and DecodeJpeg also accept the other formats (JPEG, PNG,
non-animated GIF) since their interfaces agree; DecodeImage accepts all four. Contents are
scalar strings; images are [height, width, channels] (GIFs [frames, height, width, 3]).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.formats import pillow_codecs, png
from tensorflux.ops import math as math_ops
from tensorflux.ops.image.color import convert_image_dtype
from tensorflux.ops.strings import text as string_text_ops
from tensorflux.ops.strings.conversion import scalar_bytes

__all__: list = []

_FORMATS = "Unknown image file format. One of JPEG, PNG, GIF, BMP required."


def _invalid(message: str):
    return errors.InvalidArgumentError(None, None, message)


def _contents(value) -> bytes:
    if np.ndim(value) != 0:
        raise _invalid(f"contents must be scalar, got shape {list(np.shape(value))}")
    data = value.item() if isinstance(value, np.ndarray) else value
    return data.encode("latin-1") if isinstance(data, str) else bytes(data)


def _scalar_contents(contents: TensorShape) -> None:
    if contents.ndims not in (None, 0):
        raise ValueError(f"contents must be a scalar, got shape {contents}")


def _widen(image: np.ndarray, dtype) -> np.ndarray:
    """8-bit samples from JPEG/GIF/BMP in `dtype`, scaled like convert_image_dtype."""
    if dtype == np.uint16:
        return image.astype(np.uint16) * np.uint16(256)
    if dtype == np.float32:
        return image.astype(np.float32) * np.float32(1 / 255)
    return image


def _png(data: bytes, channels: int, dtype) -> np.ndarray:
    try:
        decoded = png.decode(data, channels, np.uint8 if dtype == np.uint8 else np.uint16)
    except png.PngError as err:
        raise _invalid(str(err)) from None
    if dtype == np.float32:
        return decoded.astype(np.float32) * np.float32(1 / 65535)
    return decoded


def _jpeg(data: bytes, channels: int, ratio: int = 1) -> np.ndarray:
    try:
        return pillow_codecs.decode_jpeg(data, channels, ratio)
    except ValueError as err:
        raise _invalid(str(err)) from None


def _frames(data: bytes, op: str, animated_ok: bool) -> np.ndarray:
    try:
        frames = pillow_codecs.decode_gif(data)
    except ValueError as err:
        raise _invalid(str(err)) from None
    if not animated_ok and frames.shape[0] != 1:
        raise _invalid(f"{op} got an animated GIF with {frames.shape[0]} frames; "
                       f"use decode_gif or decode_image instead")
    return frames


def _bmp(data: bytes, channels: int) -> np.ndarray:
    try:
        return pillow_codecs.decode_bmp(data, channels)
    except ValueError as err:
        raise _invalid(str(err)) from None


def _decode_still(data: bytes, op: str, channels: int, dtype) -> np.ndarray:
    """DecodePng / DecodeJpeg: one [h, w, c] image from PNG, JPEG or a single-frame GIF."""
    kind = pillow_codecs.sniff(data)
    if kind == "png":
        return _png(data, channels, dtype)
    if kind == "jpeg":
        return _widen(_jpeg(data, channels), dtype)
    if kind == "gif":
        if channels not in (0, 3):
            raise _invalid(f"channels must be 0 or 3 for GIF, got {channels}")
        return _widen(_frames(data, op, False)[0], dtype)
    if kind == "bmp":
        raise _invalid(f"Trying to decode BMP format using a wrong op. Use `decode_bmp` or "
                       f"`decode_image` instead. Op used: {op}")
    raise _invalid(_FORMATS)


def _image_shape(contents, channels: int) -> TensorShape:
    _scalar_contents(contents)
    return TensorShape([None, None, channels or None])


# -- DecodePng, EncodePng -------------------------------------------------------------------

DecodePng = define_op(
    "DecodePng", inputs=["contents: string"], outputs=["image: dtype"],
    attrs=["channels: int = 0", "dtype: {uint8, uint16} = uint8"], differentiable=False)


@DecodePng.shape_fn
def _decode_png_shape(contents, *, channels):
    return _image_shape(contents, channels)


@DecodePng.kernel(factory=True)
def _decode_png_kernel(channels, dtype):
    if channels not in (0, 1, 3, 4):
        raise _invalid(f"`channels` must be 0, 1, 3 or 4 but got {channels}")
    out_type = np.dtype(dtype.as_numpy_dtype)

    def decode_png(contents):
        return _decode_still(_contents(contents), "DecodePng", channels, out_type)

    return decode_png


EncodePng = define_op(
    "EncodePng", inputs=["image: T"], outputs=["contents: string"],
    attrs=["compression: int = -1", "T: {uint8, uint16} = uint8"], differentiable=False)


@EncodePng.shape_fn
def _encode_png_shape(image):
    image.with_rank(3)
    return TensorShape([])


@EncodePng.kernel
def _encode_png_kernel(image, *, compression):
    if image.ndim != 3:
        raise _invalid(f"image must be 3-dimensional, got shape {list(image.shape)}")
    if image.shape[2] not in (1, 2, 3, 4):
        raise _invalid(f"image must have 1, 2, 3, or 4 channels, got {image.shape[2]}")
    if not -1 <= compression <= 9:
        raise _invalid(f"compression should be in [-1,9], got {compression}")
    return scalar_bytes(png.encode(image, compression))


# -- DecodeJpeg, EncodeJpeg -----------------------------------------------------------------

DecodeJpeg = define_op(
    "DecodeJpeg", inputs=["contents: string"], outputs=["image: uint8"],
    attrs=["channels: int = 0", "ratio: int = 1", "fancy_upscaling: bool = True",
           "try_recover_truncated: bool = False", "acceptable_fraction: float = 1.0",
           "dct_method: string = ''"], differentiable=False)


@DecodeJpeg.shape_fn
def _decode_jpeg_shape(contents, *, channels):
    return _image_shape(contents, channels)


@DecodeJpeg.kernel(factory=True)
def _decode_jpeg_kernel(channels, ratio):
    if channels not in (0, 1, 3):
        raise _invalid(f"channels must be 0, 1, or 3, got {channels}")
    if ratio not in (1, 2, 4, 8):
        raise _invalid(f"ratio must be 1, 2, 4, or 8, got {ratio}")

    def decode_jpeg(contents):
        data = _contents(contents)
        if pillow_codecs.sniff(data) == "jpeg":
            return _jpeg(data, channels, ratio)
        return _decode_still(data, "DecodeJpeg", channels, np.dtype(np.uint8))

    return decode_jpeg


ExtractJpegShape = define_op(
    "ExtractJpegShape", inputs=["contents: string"], outputs=["image_shape: output_type"],
    attrs=["output_type: {int32, int64} = int32"], differentiable=False)


@ExtractJpegShape.shape_fn
def _extract_jpeg_shape_shape(contents):
    _scalar_contents(contents)
    return TensorShape([3])


# Start-of-frame markers (baseline, progressive, lossless, ...); not DHT, JPG or DAC.
_SOF_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def jpeg_header_shape(data: bytes):
    """(height, width, components) from a JPEG's start-of-frame header, or None."""
    if data[:2] != b"\xff\xd8":
        return None
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            pos += 2
            continue
        length = int.from_bytes(data[pos + 2:pos + 4], "big")
        if marker in _SOF_MARKERS:
            if length < 8 or pos + 10 > len(data):
                return None
            height = int.from_bytes(data[pos + 5:pos + 7], "big")
            width = int.from_bytes(data[pos + 7:pos + 9], "big")
            return height, width, data[pos + 9]
        if marker == 0xDA or length < 2:  # scan data before any frame header
            return None
        pos += 2 + length
    return None


@ExtractJpegShape.kernel(factory=True)
def _extract_jpeg_shape_kernel(output_type):
    np_type = output_type.as_numpy_dtype

    def extract_jpeg_shape(contents):
        shape = jpeg_header_shape(_contents(contents))
        if shape is None:
            raise _invalid("ExtractJpegShape: Invalid JPEG data or crop window, the contents "
                           "have no JPEG frame header.")
        return np.asarray(shape, dtype=np_type)

    return extract_jpeg_shape


EncodeJpeg = define_op(
    "EncodeJpeg", inputs=["image: uint8"], outputs=["contents: string"],
    attrs=["format: {'', 'grayscale', 'rgb'} = ''", "quality: int = 95",
           "progressive: bool = False", "optimize_size: bool = False",
           "chroma_downsampling: bool = True", "density_unit: {'in', 'cm'} = 'in'",
           "x_density: int = 300", "y_density: int = 300", "xmp_metadata: string = ''"],
    differentiable=False)


@EncodeJpeg.shape_fn
def _encode_jpeg_shape(image):
    image.with_rank(3)
    return TensorShape([])


@EncodeJpeg.kernel(factory=True)
def _encode_jpeg_kernel(format, quality, progressive, optimize_size, chroma_downsampling,
                        density_unit, x_density, y_density, xmp_metadata):
    if not 0 <= quality <= 100:
        raise _invalid(f"quality must be in [0,100], got {quality}")
    per_inch = 2.54 if density_unit == "cm" else 1.0
    dpi = (x_density * per_inch, y_density * per_inch)
    wanted = {"grayscale": 1, "rgb": 3}.get(format)

    def encode_jpeg(image):
        if image.ndim != 3:
            raise _invalid(f"image must be 3-dimensional, got shape {list(image.shape)}")
        channels = image.shape[2]
        if wanted is None and channels not in (1, 3):
            raise _invalid(f"image must have 1 or 3 channels, got {channels}")
        if wanted is not None and channels != wanted:
            raise _invalid(f"format '{format}' needs {wanted} channels, got {channels}")
        if image.shape[0] == 0 or image.shape[1] == 0:
            raise _invalid(f"image must be non-empty, got shape {list(image.shape)}")
        return scalar_bytes(pillow_codecs.encode_jpeg(
            image, quality, progressive, optimize_size, chroma_downsampling, dpi,
            xmp_metadata.encode()))

    return encode_jpeg


# -- DecodeGif, DecodeBmp, DecodeImage ------------------------------------------------------

DecodeGif = define_op("DecodeGif", inputs=["contents: string"], outputs=["image: uint8"],
                      differentiable=False)


@DecodeGif.shape_fn
def _decode_gif_shape(contents):
    _scalar_contents(contents)
    return TensorShape([None, None, None, 3])


@DecodeGif.kernel
def _decode_gif_kernel(contents):
    data = _contents(contents)
    if pillow_codecs.sniff(data) != "gif":
        raise _invalid("Trying to decode a non-GIF format with DecodeGif; use decode_image")
    return _frames(data, "DecodeGif", True)


DecodeBmp = define_op("DecodeBmp", inputs=["contents: string"], outputs=["image: uint8"],
                      attrs=["channels: int = 0"], differentiable=False)


@DecodeBmp.shape_fn
def _decode_bmp_shape(contents, *, channels):
    return _image_shape(contents, channels)


@DecodeBmp.kernel(factory=True)
def _decode_bmp_kernel(channels):
    if channels not in (0, 1, 3, 4):
        raise _invalid(f"channels must be 0, 1, 3 or 4, got {channels}")

    def decode_bmp(contents):
        data = _contents(contents)
        if pillow_codecs.sniff(data) != "bmp":
            raise _invalid("Trying to decode a non-BMP format with DecodeBmp; use decode_image")
        return _bmp(data, channels)

    return decode_bmp


DecodeImage = define_op(
    "DecodeImage", inputs=["contents: string"], outputs=["image: dtype"],
    attrs=["channels: int = 0", "dtype: {uint8, uint16, float32} = uint8",
           "expand_animations: bool = True"], differentiable=False)


@DecodeImage.shape_fn
def _decode_image_shape(contents, *, channels, expand_animations):
    _scalar_contents(contents)
    if expand_animations:
        return TensorShape(None)
    return TensorShape([None, None, channels or None])


@DecodeImage.kernel(factory=True)
def _decode_image_kernel(channels, dtype, expand_animations):
    if channels not in (0, 1, 3, 4):
        raise _invalid(f"channels must be 0, 1, 3 or 4, got {channels}")
    out_type = np.dtype(dtype.as_numpy_dtype)

    def decode_image(contents):
        data = _contents(contents)
        kind = pillow_codecs.sniff(data)
        if kind == "png":
            return _png(data, channels, out_type)
        if kind == "gif":
            if channels not in (0, 3):
                raise _invalid(f"channels must be 0 or 3 for GIF, got {channels}")
            frames = _frames(data, "DecodeImage", True)
            return _widen(frames if expand_animations else frames[0], out_type)
        if kind == "jpeg":
            if channels == 4:
                raise _invalid("channels must be 0, 1, or 3 for JPEG, got 4")
            return _widen(_jpeg(data, channels), out_type)
        if kind == "bmp":
            if channels == 1:
                raise _invalid("channels must be 0, 3 or 4 for BMP, got 1")
            return _widen(_bmp(data, channels), out_type)
        raise _invalid(_FORMATS)

    return decode_image


# -- Python wrappers --------------------------------------------------------------------------

def _string(contents):
    return convert_to_tensor(contents, dtype=dtypes.string, name="contents")


def decode_png(contents, channels=0, dtype=dtypes.uint8, name=None):
    """Decodes a PNG (or JPEG, or single-frame GIF) string into a uint8/uint16 image.

    Args:
        contents: 0-D string: the encoded image.
        channels: 0 (the file's), 1 (gray), 3 (RGB) or 4 (RGBA).
        dtype: uint8 or uint16.
        name: optional name.

    Returns:
        `[height, width, channels]` of `dtype`.
    """
    return DecodePng(_string(contents), channels=channels, dtype=dtype, name=name)


def encode_png(image, compression=-1, name=None):
    """PNG-encodes a `[height, width, 1-4]` uint8 or uint16 image (compression -1..9)."""
    return EncodePng(convert_to_tensor(image, name="image"), compression=compression, name=name)


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True,
                try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    """Decodes a JPEG (or PNG, or single-frame GIF) string into a uint8 image.

    `ratio` (1, 2, 4, 8) downscales while decoding. Needs Pillow for JPEG data.

    Returns:
        `[height / ratio, width / ratio, channels]` uint8.
    """
    return DecodeJpeg(_string(contents), channels=channels, ratio=ratio,
                      fancy_upscaling=fancy_upscaling,
                      try_recover_truncated=try_recover_truncated,
                      acceptable_fraction=acceptable_fraction, dct_method=dct_method,
                      name=name)


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300,
                xmp_metadata="", name=None):
    """JPEG-encodes a `[height, width, 1 or 3]` uint8 image (needs Pillow)."""
    return EncodeJpeg(convert_to_tensor(image, name="image"), format=format, quality=quality,
                      progressive=progressive, optimize_size=optimize_size,
                      chroma_downsampling=chroma_downsampling, density_unit=density_unit,
                      x_density=x_density, y_density=y_density, xmp_metadata=xmp_metadata,
                      name=name)


def decode_gif(contents, name=None):
    """Decodes every frame of a GIF: `[frames, height, width, 3]` uint8 (needs Pillow)."""
    return DecodeGif(_string(contents), name=name)


def decode_bmp(contents, channels=0, name=None):
    """Decodes a BMP: `[height, width, channels]` uint8 (needs Pillow)."""
    return DecodeBmp(_string(contents), channels=channels, name=name)


def decode_image(contents, channels=None, dtype=dtypes.uint8, name=None,
                 expand_animations=True):
    """Decodes a BMP, GIF, JPEG or PNG string, detecting the format from its bytes.

    Args:
        contents: 0-D string.
        channels: None/0 (the file's), 1, 3 or 4.
        dtype: the output type; uint8, uint16 and float32 are decoded directly, other types
            through `convert_image_dtype`.
        name: optional name.
        expand_animations: GIFs give all frames `[frames, h, w, 3]`; False gives the first
            frame, and every result is 3-D.

    Returns:
        The image (rank 3, or 4 for GIFs when `expand_animations`).
    """

    dtype = dtypes.as_dtype(dtype)
    channels = channels or 0
    with graph_mod.get_default_graph().name_scope(name or "decode_image"):
        direct = dtype if dtype in (dtypes.uint8, dtypes.uint16, dtypes.float32) else (
            dtypes.uint16)
        image = DecodeImage(_string(contents), channels=channels, dtype=direct,
                            expand_animations=expand_animations)
        return image if direct == dtype else convert_image_dtype(image, dtype)


def is_jpeg(contents, name=None):
    """True when `contents` starts with the JPEG marker bytes."""
    with graph_mod.get_default_graph().name_scope(name or "is_jpeg") as scope:
        head = string_text_ops.substr(contents, 0, 3)
        return math_ops.equal(head, b"\xff\xd8\xff", name=scope)


def extract_jpeg_shape(contents, output_type=dtypes.int32, name=None):
    """[height, width, channels] of a JPEG image, read from its header without decoding."""
    return ExtractJpegShape(_string(contents), output_type=output_type, name=name)
