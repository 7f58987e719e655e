"""The string hashes of TensorFlow's ops, so that bucket ids match TensorFlow's.

- `fingerprint64`: FarmHash Fingerprint64 (`StringToHashBucketFast`, `tf.fingerprint`, the
  feature columns' hash buckets); `fingerprint_cat64` chains two (`SparseCross`).
- `hash64`: TensorFlow's legacy Hash64, a MurmurHash64A with seed 0xDECAFCAFFE
  (`StringToHashBucket`).
- `siphash24`: SipHash-2-4 with a 128-bit key (`StringToHashBucketStrong`).

`fingerprint64(data)` is FarmHash `Fingerprint64` (its `farmhashna::Hash64` variant): TF's
`StringToHashBucketFast` is `fingerprint64(s) % num_buckets`, `tf.fingerprint` emits its 8
little-endian bytes, and `SparseCross` chains fingerprints with `fingerprint_cat64`. Bucket ids
therefore match TensorFlow's, so a model trained there keeps its hashed features here.

The algorithm is FarmHash's published one, written over Python integers masked to 64 bits (a
string of n bytes costs about n/64 loop turns plus a fixed tail; ~5 µs for short strings).
"""

from __future__ import annotations

import struct

__all__ = ["fingerprint64", "fingerprint_cat64", "hash64", "siphash24"]

_MASK = (1 << 64) - 1
_K0 = 0xC3A5C85C97CB3127
_K1 = 0xB492B66FBE98F273
_K2 = 0x9AE16A3B2F90404F
_CAT_MUL = 0xC6A4A7935BD1E995
_U64 = struct.Struct("<Q").unpack_from
_U32 = struct.Struct("<I").unpack_from


def _fetch64(data: bytes, at: int) -> int:
    return _U64(data, at)[0]


def _fetch32(data: bytes, at: int) -> int:
    return _U32(data, at)[0]


def _rotate(value: int, shift: int) -> int:
    if shift == 0:
        return value
    return ((value >> shift) | (value << (64 - shift))) & _MASK


def _shift_mix(value: int) -> int:
    return value ^ (value >> 47)


def _hash_len16(u: int, v: int, mul: int) -> int:
    a = ((u ^ v) * mul) & _MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & _MASK
    b ^= b >> 47
    return (b * mul) & _MASK


def _hash_len0to16(data: bytes, n: int) -> int:
    if n >= 8:
        mul = _K2 + n * 2
        a = (_fetch64(data, 0) + _K2) & _MASK
        b = _fetch64(data, n - 8)
        c = (_rotate(b, 37) * mul + a) & _MASK
        d = ((_rotate(a, 25) + b) * mul) & _MASK
        return _hash_len16(c, d, mul)
    if n >= 4:
        mul = _K2 + n * 2
        a = _fetch32(data, 0)
        return _hash_len16((n + (a << 3)) & _MASK, _fetch32(data, n - 4), mul)
    if n > 0:
        a, b, c = data[0], data[n >> 1], data[n - 1]
        y = (a + (b << 8)) & 0xFFFFFFFF
        z = (n + (c << 2)) & 0xFFFFFFFF
        return (_shift_mix(((y * _K2) ^ (z * _K0)) & _MASK) * _K2) & _MASK
    return _K2


def _hash_len17to32(data: bytes, n: int) -> int:
    mul = _K2 + n * 2
    a = (_fetch64(data, 0) * _K1) & _MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, n - 8) * mul) & _MASK
    d = (_fetch64(data, n - 16) * _K2) & _MASK
    return _hash_len16((_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK,
                       (a + _rotate((b + _K2) & _MASK, 18) + c) & _MASK, mul)


def _hash_len33to64(data: bytes, n: int) -> int:
    mul = _K2 + n * 2
    a = (_fetch64(data, 0) * _K2) & _MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, n - 8) * mul) & _MASK
    d = (_fetch64(data, n - 16) * _K2) & _MASK
    y = (_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK
    z = _hash_len16(y, (a + _rotate((b + _K2) & _MASK, 18) + c) & _MASK, mul)
    e = (_fetch64(data, 16) * mul) & _MASK
    f = _fetch64(data, 24)
    g = ((y + _fetch64(data, n - 32)) * mul) & _MASK
    h = ((z + _fetch64(data, n - 24)) * mul) & _MASK
    return _hash_len16((_rotate((e + f) & _MASK, 43) + _rotate(g, 30) + h) & _MASK,
                       (e + _rotate((f + a) & _MASK, 18) + g) & _MASK, mul)


def _weak_hash_len32_with_seeds(data: bytes, at: int, a: int, b: int) -> tuple[int, int]:
    w, x, y, z = _U64_4(data, at)
    a = (a + w) & _MASK
    b = _rotate((b + a + z) & _MASK, 21)
    c = a
    a = (a + x + y) & _MASK
    b = (b + _rotate(a, 44)) & _MASK
    return (a + z) & _MASK, (b + c) & _MASK


_U64_4 = struct.Struct("<4Q").unpack_from


def _hash_long(data: bytes, n: int) -> int:
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _MASK
    z = (_shift_mix((y * _K2 + 113) & _MASK) * _K2) & _MASK
    v0 = v1 = w0 = w1 = 0
    x = (x * _K2 + _fetch64(data, 0)) & _MASK
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    at = 0
    while True:
        x = (_rotate((x + y + v0 + _fetch64(data, at + 8)) & _MASK, 37) * _K1) & _MASK
        y = (_rotate((y + v1 + _fetch64(data, at + 48)) & _MASK, 42) * _K1) & _MASK
        x ^= w1
        y = (y + v0 + _fetch64(data, at + 40)) & _MASK
        z = (_rotate((z + w0) & _MASK, 33) * _K1) & _MASK
        v0, v1 = _weak_hash_len32_with_seeds(data, at, (v1 * _K1) & _MASK, (x + w0) & _MASK)
        w0, w1 = _weak_hash_len32_with_seeds(data, at + 32, (z + w1) & _MASK,
                                             (y + _fetch64(data, at + 16)) & _MASK)
        z, x = x, z
        at += 64
        if at == end:
            break
    mul = _K1 + ((z & 0xFF) << 1)
    at = last64
    w0 = (w0 + ((n - 1) & 63)) & _MASK
    v0 = (v0 + w0) & _MASK
    w0 = (w0 + v0) & _MASK
    x = (_rotate((x + y + v0 + _fetch64(data, at + 8)) & _MASK, 37) * mul) & _MASK
    y = (_rotate((y + v1 + _fetch64(data, at + 48)) & _MASK, 42) * mul) & _MASK
    x ^= (w1 * 9) & _MASK
    y = (y + v0 * 9 + _fetch64(data, at + 40)) & _MASK
    z = (_rotate((z + w0) & _MASK, 33) * mul) & _MASK
    v0, v1 = _weak_hash_len32_with_seeds(data, at, (v1 * mul) & _MASK, (x + w0) & _MASK)
    w0, w1 = _weak_hash_len32_with_seeds(data, at + 32, (z + w1) & _MASK,
                                         (y + _fetch64(data, at + 16)) & _MASK)
    z, x = x, z
    return _hash_len16((_hash_len16(v0, w0, mul) + _shift_mix(y) * _K0 + z) & _MASK,
                       (_hash_len16(v1, w1, mul) + x) & _MASK, mul)


def fingerprint64(data) -> int:
    """FarmHash Fingerprint64 of `data` (bytes, or str encoded as UTF-8), an unsigned int."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    data = bytes(data)
    n = len(data)
    if n <= 16:
        return _hash_len0to16(data, n)
    if n <= 32:
        return _hash_len17to32(data, n)
    if n <= 64:
        return _hash_len33to64(data, n)
    return _hash_long(data, n)


def fingerprint_cat64(fp1: int, fp2: int) -> int:
    """Combines two fingerprints into one (TF's FingerprintCat64, used by SparseCross)."""
    result = fp1 ^ _CAT_MUL
    result ^= (_shift_mix((fp2 * _CAT_MUL) & _MASK) * _CAT_MUL) & _MASK
    result = (result * _CAT_MUL) & _MASK
    result = (_shift_mix(result) * _CAT_MUL) & _MASK
    return _shift_mix(result)


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
