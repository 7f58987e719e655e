"""`tf.compat`: string helpers, and `tf.compat.v1`, which is tensorflux itself.

Programs written `import tensorflow.compat.v1 as tf` run as `import tensorflux.compat.v1 as
tf`: `tensorflux.compat.v1` is registered as an alias of the `tensorflux` module.
"""

import numbers
import os
import sys

import numpy as np

from tensorflux.framework.tensor_shape import dimension_at_index, dimension_value

__all__ = ["v1", "as_bytes", "as_text", "as_str", "as_str_any", "path_to_str",
           "dimension_value", "dimension_at_index", "bytes_or_text_types", "integral_types",
           "real_types", "complex_types"]

# `tf.compat.v1` is the package itself. It is looked up, not imported: a package's object is in
# sys.modules before any of its submodules runs.
v1 = sys.modules[__name__.rpartition(".")[0]]
sys.modules[__name__ + ".v1"] = v1

bytes_or_text_types = (bytes, str)
integral_types = (numbers.Integral, np.integer)
real_types = (numbers.Real, np.integer, np.floating)
complex_types = (numbers.Complex, np.number)


def as_bytes(bytes_or_text, encoding: str = "utf-8") -> bytes:
    """`bytes_or_text` as bytes: str is encoded, bytes and bytearray are returned as bytes.

    Raises:
        TypeError: it is neither text nor bytes.
    """
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text, encoding: str = "utf-8") -> str:
    """`bytes_or_text` as str: bytes are decoded, str is returned unchanged.

    Raises:
        TypeError: it is neither text nor bytes.
    """
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, (bytes, bytearray)):
        return bytes(bytes_or_text).decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value, encoding: str = "utf-8") -> str:
    """`as_str` for bytes, `str(value)` for anything else."""
    if isinstance(value, (bytes, bytearray)):
        return as_str(value, encoding)
    return str(value)


def path_to_str(path):
    """A path-like object as its string path; other values unchanged."""
    if isinstance(path, os.PathLike):
        return os.fspath(path)
    return path
