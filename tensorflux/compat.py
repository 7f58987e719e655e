"""`tf.compat`: string helpers, and `tf.compat.v1`, which is tensorflux itself.

Programs written `import tensorflow.compat.v1 as tf` run as `import tensorflux.compat.v1 as
tf`: `tensorflux.compat.v1` is registered as an alias of the `tensorflux` module.
"""

import contextlib
import datetime
import numbers
import os
import sys

import numpy as np

from tensorflux.framework.tensor_shape import dimension_at_index, dimension_value

__all__ = ["v1", "as_bytes", "as_text", "as_str", "as_str_any", "path_to_str",
           "dimension_value", "dimension_at_index", "bytes_or_text_types", "integral_types",
           "real_types", "complex_types", "forward_compatible",
           "forward_compatibility_horizon"]

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


# TF 1.15's forward-compatibility horizon: graphs may use what consumers built after it accept.
_horizon = [datetime.date(2019, 10, 16)]


def forward_compatible(year: int, month: int, day: int) -> bool:
    """True when the forward-compatibility horizon is past `year-month-day` (TF's check
    for when a producer may emit a newer op form)."""
    return _horizon[-1] > datetime.date(year, month, day)


@contextlib.contextmanager
def forward_compatibility_horizon(year: int, month: int, day: int):
    """Within the block `forward_compatible` compares against `year-month-day` (for tests)."""
    _horizon.append(datetime.date(year, month, day))
    try:
        yield
    finally:
        _horizon.pop()
