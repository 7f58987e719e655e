"""CRC32C (Castagnoli) checksums and TensorFlow's masking of stored checksums.

TensorFlow never stores a raw CRC next to the data it covers: a CRC of bytes that themselves
contain CRCs is weak, so stored values are "masked" (rotated right by 15 bits plus a constant).
`value`/`extend` compute plain CRC32C; `mask`/`unmask` convert to and from the stored form.

The `crc32c` package (hardware accelerated) does the work; a table-driven pure-Python fallback
keeps the module importable without it, at a much lower speed.
"""

from __future__ import annotations

try:
    import crc32c as _crc32c_pkg
except ImportError:  # pragma: no cover - the package is a declared dependency
    _crc32c_pkg = None

_MASK_DELTA = 0xA282EAD8
_U32 = 0xFFFFFFFF


def _make_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _make_table() if _crc32c_pkg is None else None


def _extend_pure(crc: int, data) -> int:
    table = _TABLE
    crc ^= _U32
    for byte in memoryview(data).cast("B"):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ _U32


def extend(crc: int, data) -> int:
    """Returns the CRC32C of `A + data` given `crc`, the CRC32C of some bytes `A`.

    Args:
      crc: CRC32C of the bytes seen so far (0 for none).
      data: bytes-like object (bytes, bytearray, memoryview, contiguous uint8 ndarray).

    Returns:
      The unmasked CRC32C as an int in [0, 2**32).

    Example:
      >>> extend(value(b"1234"), b"56789") == value(b"123456789")
      True
    """
    if _crc32c_pkg is not None:
        return _crc32c_pkg.crc32c(data, crc)
    return _extend_pure(crc, data)


def value(data) -> int:
    """Returns the CRC32C of `data`.

    Args:
      data: bytes-like object.

    Returns:
      The unmasked CRC32C as an int in [0, 2**32).

    Example:
      >>> hex(value(b"123456789"))
      '0xe3069283'
    """
    return extend(0, data)


def mask(crc: int) -> int:
    """Returns the masked form of `crc` that TensorFlow stores in files.

    Example:
      >>> hex(mask(value(b"")))
      '0xa282ead8'
    """
    crc &= _U32
    return ((((crc >> 15) | (crc << 17)) & _U32) + _MASK_DELTA) & _U32


def unmask(masked: int) -> int:
    """Inverts `mask`.

    Example:
      >>> unmask(mask(12345))
      12345
    """
    rot = (masked - _MASK_DELTA) & _U32
    return ((rot >> 17) | (rot << 15)) & _U32
