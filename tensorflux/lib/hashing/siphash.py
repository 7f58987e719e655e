"""SipHash-2-4 (`StringToHashBucketStrong`, keyed by two 64-bit integers), reproduced from the
published algorithm so bucket ids equal TensorFlow's."""

from __future__ import annotations

import struct

__all__ = ["siphash24"]

_MASK = (1 << 64) - 1
_U64 = struct.Struct("<Q").unpack_from


def _fetch64(data: bytes, at: int) -> int:
    return _U64(data, at)[0]


def _rotl(value: int, shift: int) -> int:
    return ((value << shift) | (value >> (64 - shift))) & _MASK


def siphash24(data, key0: int, key1: int) -> int:
    """SipHash-2-4 of `data` under the 128-bit key (key0, key1), an unsigned int."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    data = bytes(data)
    k0, k1 = key0 & _MASK, key1 & _MASK
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D,
         k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def rounds(count):
        v0, v1, v2, v3 = v
        for _ in range(count):
            v0 = (v0 + v1) & _MASK
            v1 = _rotl(v1, 13) ^ v0
            v0 = _rotl(v0, 32)
            v2 = (v2 + v3) & _MASK
            v3 = _rotl(v3, 16) ^ v2
            v0 = (v0 + v3) & _MASK
            v3 = _rotl(v3, 21) ^ v0
            v2 = (v2 + v1) & _MASK
            v1 = _rotl(v1, 17) ^ v2
            v2 = _rotl(v2, 32)
        v[:] = [v0, v1, v2, v3]

    n = len(data)
    whole = n - n % 8
    for at in range(0, whole, 8):
        m = _fetch64(data, at)
        v[3] ^= m
        rounds(2)
        v[0] ^= m
    last = ((n & 0xFF) << 56) | int.from_bytes(data[whole:], "little")
    v[3] ^= last
    rounds(2)
    v[0] ^= last
    v[2] ^= 0xFF
    rounds(4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]
