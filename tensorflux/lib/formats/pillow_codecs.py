"""JPEG, GIF and BMP through Pillow (an optional dependency: `pip install 'tensorflux[image]'`).

PNG has its own decoder (`lib.formats.png`); these formats use Pillow, imported on first use.
Without Pillow every entry point raises `UnimplementedError` naming the package. JPEG values can
differ from TensorFlow's by a few levels: libjpeg builds and IDCT methods differ, and JPEG is
lossy anyway.
"""

from __future__ import annotations

import io

import numpy as np

from tensorflux.framework import errors

_MISSING = ("{what} needs the Pillow package, which is not installed: "
            "pip install 'tensorflux[image]' (or pip install pillow)")


def _pillow(what: str):
    try:
        from PIL import Image
    except ImportError:
        raise errors.UnimplementedError(None, None, _MISSING.format(what=what)) from None
    return Image


def sniff(data: bytes) -> str | None:
    """'png', 'jpeg', 'gif', 'bmp' or None, from the leading bytes."""
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if data[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if data[:2] == b"BM":
        return "bmp"
    return None


def _open(data: bytes, what: str):
    image_mod = _pillow(what)
    try:
        image = image_mod.open(io.BytesIO(data))
        image.load()
    except Exception as err:  # Pillow raises many types for corrupt data
        raise ValueError(f"Invalid {what} data: {err}") from None
    return image


def _as_hwc(image) -> np.ndarray:
    array = np.asarray(image, dtype=np.uint8)
    return array[:, :, None] if array.ndim == 2 else array


def decode_jpeg(data: bytes, channels: int = 0, ratio: int = 1) -> np.ndarray:
    """[height / ratio, width / ratio, channels] uint8; channels 0 keeps the file's (1 or 3).

    Grayscale output takes libjpeg's luma plane directly (as TensorFlow does), not a weighted
    mix of decoded RGB.
    """
    image_mod = _pillow("decode_jpeg")
    try:
        image = image_mod.open(io.BytesIO(data))
        mode = {1: "L", 3: "RGB"}.get(channels, "L" if image.mode == "L" else "RGB")
        if ratio > 1 or channels == 1:
            image.draft(mode, (max(1, image.size[0] // ratio), max(1, image.size[1] // ratio)))
        image.load()
    except Exception as err:
        raise ValueError(f"Invalid JPEG data: {err}") from None
    return _as_hwc(image.convert(mode))


def encode_jpeg(image: np.ndarray, quality: int = 95, progressive: bool = False,
                optimize_size: bool = False, chroma_downsampling: bool = True,
                dpi: tuple = (300, 300), xmp: bytes = b"") -> bytes:
    """JPEG bytes of a [height, width, 1 or 3] uint8 array."""
    image_mod = _pillow("encode_jpeg")
    mode = "L" if image.shape[2] == 1 else "RGB"
    picture = image_mod.fromarray(np.ascontiguousarray(image[:, :, 0] if mode == "L" else image),
                                  mode)
    options = {"quality": int(quality), "progressive": bool(progressive),
               "optimize": bool(optimize_size), "dpi": dpi}
    if mode == "RGB":
        options["subsampling"] = 2 if chroma_downsampling else 0
    if xmp:
        options["xmp"] = xmp
    buffer = io.BytesIO()
    picture.save(buffer, format="JPEG", **options)
    return buffer.getvalue()


def decode_gif(data: bytes) -> np.ndarray:
    """[frames, height, width, 3] uint8: every frame composed over the previous ones."""
    image = _open(data, "GIF")
    frames = []
    for index in range(getattr(image, "n_frames", 1)):
        image.seek(index)
        frames.append(np.asarray(image.convert("RGB"), dtype=np.uint8))
    return np.stack(frames)


def decode_bmp(data: bytes, channels: int = 0) -> np.ndarray:
    """[height, width, channels] uint8 (channels 0 keeps the file's 1, 3 or 4)."""
    image = _open(data, "BMP")
    have = {"L": 1, "P": 3, "RGB": 3, "RGBA": 4, "1": 1}.get(image.mode, 3)
    mode = {1: "L", 3: "RGB", 4: "RGBA"}[channels or have]
    return _as_hwc(image.convert(mode))
