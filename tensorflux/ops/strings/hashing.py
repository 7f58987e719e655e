"""String hashing into buckets (with TensorFlow's hashes, so bucket ids match) and web-safe
base64.

`StringToHashBucketFast` uses FarmHash Fingerprint64, `StringToHashBucket` TF's legacy Hash64
and `StringToHashBucketStrong` SipHash-2-4 under its 128-bit key (lib/hashing/),
each modulo the bucket count: the same bucket ids as TensorFlow's, so hashed features of a model
trained there keep their rows here.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.lib.hashing import farmhash, legacy_hash, siphash
from tensorflux.ops.strings.conversion import map_bytes

__all__ = ["string_to_hash_bucket_fast", "string_to_hash_bucket", "string_to_hash_bucket_strong",
           "encode_base64", "decode_base64"]


def _hash_buckets(strings, num_buckets: int, hash_fn) -> np.ndarray:
    flat = strings.reshape(-1)
    hashes = np.fromiter((hash_fn(text) for text in flat), dtype=np.uint64, count=flat.size)
    return (hashes % np.uint64(num_buckets)).astype(np.int64).reshape(strings.shape)


# Categorical inputs repeat the same few strings step after step: remember their hashes.
_hash64 = functools.lru_cache(maxsize=1 << 16)(legacy_hash.hash64)


def _hash_op(name: str, input_name: str, extra_attrs=()):
    op = define_op(name, inputs=[f"{input_name}: string"], outputs=["output: int64"],
                   attrs=["num_buckets: int >= 1", *extra_attrs], differentiable=False)
    op.shape_fn(lambda strings: strings)
    return op


StringToHashBucketFast = _hash_op("StringToHashBucketFast", "input")
StringToHashBucket = _hash_op("StringToHashBucket", "string_tensor")
StringToHashBucketStrong = _hash_op("StringToHashBucketStrong", "input", ["key: list(int)"])


@StringToHashBucketFast.kernel
def _string_to_hash_bucket_fast_kernel(input, *, num_buckets):
    hashes = farmhash.fingerprint64_array(input.reshape(-1))
    return (hashes % np.uint64(num_buckets)).astype(np.int64).reshape(input.shape)


@StringToHashBucket.kernel
def _string_to_hash_bucket_kernel(string_tensor, *, num_buckets):
    return _hash_buckets(string_tensor, num_buckets, _hash64)


@StringToHashBucketStrong.kernel(factory=True)
def _string_to_hash_bucket_strong_kernel(num_buckets, key):
    def strong(input):
        if len(key) != 2:
            raise errors.InvalidArgumentError(None, None, "Key must have 2 elements")
        key0, key1 = key
        return _hash_buckets(input, num_buckets,
                             lambda text: siphash.siphash24(text, key0, key1))

    return strong


def string_to_hash_bucket_fast(input, num_buckets, name=None):
    """Hashes each string to a bucket in `[0, num_buckets)` (FarmHash Fingerprint64, as TF).

    Args:
        input: a string tensor.
        num_buckets: the number of buckets (>= 1).
        name: optional name.

    Returns:
        An int64 tensor of the same shape.
    """
    return StringToHashBucketFast(convert_to_tensor(input, dtype=dtypes.string),
                                  num_buckets=num_buckets, name=name)


def string_to_hash_bucket(string_tensor=None, num_buckets=None, name=None, input=None):
    """Hashes each string to a bucket (the legacy op; see `string_to_hash_bucket_fast`)."""
    value = string_tensor if string_tensor is not None else input
    return StringToHashBucket(convert_to_tensor(value, dtype=dtypes.string),
                              num_buckets=num_buckets, name=name)


def string_to_hash_bucket_strong(input, num_buckets, key, name=None):
    """Hashes each string with a keyed hash; `key` is two ints (a 128-bit secret)."""
    return StringToHashBucketStrong(convert_to_tensor(input, dtype=dtypes.string),
                                    num_buckets=num_buckets, key=list(key), name=name)


# -- base64 ----------------------------------------------------------------------------------

EncodeBase64 = define_op("EncodeBase64", inputs=["input: string"], outputs=["output: string"],
                         attrs=["pad: bool = False"], differentiable=False)
EncodeBase64.shape_fn(lambda input: input)


@EncodeBase64.kernel
def _encode_base64_kernel(input, *, pad):
    if pad:
        return map_bytes(base64.urlsafe_b64encode, input)
    return map_bytes(lambda s: base64.urlsafe_b64encode(s).rstrip(b"="), input)


DecodeBase64 = define_op("DecodeBase64", inputs=["input: string"], outputs=["output: string"],
                         differentiable=False)
DecodeBase64.shape_fn(lambda input: input)

_WEB_SAFE = re.compile(rb"[A-Za-z0-9_-]*")
_PADDED = re.compile(rb"[A-Za-z0-9_-]*(?:[A-Za-z0-9_-]{2}==|[A-Za-z0-9_-]{3}=)")


def _decode_one(text: bytes) -> bytes:
    if _WEB_SAFE.fullmatch(text):
        if len(text) % 4 == 1:
            raise errors.InvalidArgumentError(
                None, None, "Base64 string length cannot be 1 modulo 4.")
        text += b"=" * (-len(text) % 4)
    elif not (_PADDED.fullmatch(text) and len(text) % 4 == 0):
        raise errors.InvalidArgumentError(None, None, "Invalid character found in base64.")
    try:
        return base64.urlsafe_b64decode(text)
    except binascii.Error as err:
        raise errors.InvalidArgumentError(None, None, f"Invalid base64: {err}") from None


@DecodeBase64.kernel
def _decode_base64_kernel(input):
    return map_bytes(_decode_one, input)


def encode_base64(input, pad=False, name=None):
    """Web-safe base64 (`-` and `_` for `+` and `/`), unpadded unless `pad`.

    Args:
        input: a string tensor.
        pad: append `=` padding.
        name: optional name.

    Returns:
        A string tensor of the same shape.
    """
    return EncodeBase64(convert_to_tensor(input, dtype=dtypes.string), pad=pad, name=name)


def decode_base64(input, name=None):
    """Decodes web-safe base64, padded or not.

    Raises (at run time):
        InvalidArgumentError: a character outside the web-safe alphabet, or a bad length.
    """
    return DecodeBase64(convert_to_tensor(input, dtype=dtypes.string), name=name)
