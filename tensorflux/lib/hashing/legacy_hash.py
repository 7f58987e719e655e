"""TensorFlow's legacy string Hash64 (`StringToHashBucket`): MurmurHash64A with seed
0xDECAFCAFFE, reproduced from the published algorithm so bucket ids equal TensorFlow's."""

from __future__ import annotations

import struct

__all__ = ["hash64"]

_MASK = (1 << 64) - 1
_U64 = struct.Struct("<Q").unpack_from


def _fetch64(data: bytes, at: int) -> int:
    return _U64(data, at)[0]


_MURMUR_MUL = 0xC6A4A7935BD1E995


def hash64(data, seed: int = 0xDECAFCAFFE) -> int:
    """TensorFlow's legacy Hash64 (MurmurHash64A) of `data`, an unsigned int."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    data = bytes(data)
    n = len(data)
    h = (seed ^ (n * _MURMUR_MUL)) & _MASK
    whole = n - n % 8
    for at in range(0, whole, 8):
        k = (_fetch64(data, at) * _MURMUR_MUL) & _MASK
        k ^= k >> 47
        k = (k * _MURMUR_MUL) & _MASK
        h = ((h ^ k) * _MURMUR_MUL) & _MASK
    if n > whole:
        for i in range(n - whole - 1, -1, -1):
            h ^= data[whole + i] << (8 * i)
        h = (h * _MURMUR_MUL) & _MASK
    h ^= h >> 47
    h = (h * _MURMUR_MUL) & _MASK
    return h ^ (h >> 47)
