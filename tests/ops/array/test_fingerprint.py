"""Fingerprint (tf.fingerprint) and the FarmHash Fingerprint64 under it.

Reference vectors: Fingerprint64 values TensorFlow 2.21 gives (through
`tf.strings.to_hash_bucket_fast(s, 2**63 - 1)` and `tf.fingerprint`), one per length class of
the algorithm (0, 1-3, 4-7, 8-16, 17-32, 33-64 and > 64 bytes).
"""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401 - autouse fixture

import tensorflux as tf
from tensorflux.lib.hashing.farmhash import fingerprint64, fingerprint_cat64

COVERED_OPS = {"Fingerprint"}

VECTORS = [
    (b"", 0x9AE16A3B2F90404F),
    (b"a", 0xB3454265B6DF75E3),
    (b"hello", 0xB48BE5A931380CE8),
    (b"0123456789abcdef", 0x54B961E5DC834067),
    (b"x" * 17, 0x9CE745A1F3812FA5),
    (b"q" * 33, 0x84ADBD88F2DEA763),
    (bytes(range(65)), 0xC6A3282C3E793DBE),
    (bytes(range(256)) * 3 + b"tail", 0x9A7CCFCC97730459),
]


@pytest.mark.parametrize("data,want", VECTORS)
def test_fingerprint64_reference_vectors(data, want):
    assert fingerprint64(data) == want


def _le(value):
    return list(value.to_bytes(8, "little"))


def test_rows_of_numbers_hash_their_bytes():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = tf.fingerprint(x)
    assert out.dtype == tf.uint8 and out.get_shape().as_list() == [3, 8]
    got = run(out)
    for i in range(3):
        assert got[i].tolist() == _le(fingerprint64(x[i].tobytes()))
    floats = run(tf.fingerprint(np.array([1.5, -2.0])))
    assert floats[1].tolist() == _le(fingerprint64(np.float64(-2.0).tobytes()))


def test_rows_of_strings():
    one = run(tf.fingerprint(np.array([b"", b"hello"], object)))
    assert one.tolist() == [_le(0x9AE16A3B2F90404F), _le(0xB48BE5A931380CE8)]
    two = run(tf.fingerprint(np.array([[b"ab", b"cd"]], object)))
    joined = fingerprint64(b"".join(fingerprint64(s).to_bytes(8, "little")
                                    for s in (b"ab", b"cd")))
    assert two[0].tolist() == _le(joined)


def test_errors_and_cat():
    with pytest.raises(ValueError):
        tf.fingerprint(tf.constant(1.0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="method"):
        run(tf.fingerprint([1, 2], method="md5"))
    # FingerprintCat64 depends on order and differs from both inputs.
    a, b = fingerprint64(b"a"), fingerprint64(b"b")
    assert fingerprint_cat64(a, b) != fingerprint_cat64(b, a)
    assert fingerprint_cat64(a, b) not in (a, b)
    assert 0 <= fingerprint_cat64(a, b) < 2 ** 64


def test_empty_batches():
    # no rows: an empty [0, 8] result, whatever the row size (0 or not)
    with tf.Graph().as_default():
        with tf.Session() as sess:
            got = sess.run([tf.fingerprint([]), tf.fingerprint(np.zeros([0, 5], np.int32))])
    assert [g.shape for g in got] == [(0, 8), (0, 8)]
    assert all(g.dtype == np.uint8 for g in got)
