import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tensorflux.lib.formats import crc32c

# Test vectors from RFC 3720 (iSCSI), section B.4, also used by TensorFlow's crc32c_test.
RFC3720_VECTORS = [
    (bytes(32), 0x8A9136AA),
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
    (bytes(range(31, -1, -1)), 0x113FDB5C),
]


@pytest.fixture
def pure_python(monkeypatch):
    monkeypatch.setattr(crc32c, "_crc32c_pkg", None)
    monkeypatch.setattr(crc32c, "_TABLE", crc32c._make_table())


def test_check_value():
    assert crc32c.value(b"123456789") == 0xE3069283


def test_empty():
    assert crc32c.value(b"") == 0
    assert crc32c.mask(crc32c.value(b"")) == 0xA282EAD8
    assert crc32c.unmask(0xA282EAD8) == 0


@pytest.mark.parametrize("data, expected", RFC3720_VECTORS)
def test_rfc3720_vectors(data, expected):
    assert crc32c.value(data) == expected


@pytest.mark.parametrize("data, expected", RFC3720_VECTORS + [(b"123456789", 0xE3069283)])
def test_pure_python_fallback_matches(pure_python, data, expected):
    assert crc32c._crc32c_pkg is None
    assert crc32c.value(data) == expected
    assert crc32c.extend(crc32c.value(data[:5]), data[5:]) == expected


def test_extend_splits():
    assert crc32c.extend(crc32c.value(b"hello "), b"world") == crc32c.value(b"hello world")


@given(st.binary(max_size=300), st.binary(max_size=300))
def test_extend_is_concatenation(a, b):
    assert crc32c.extend(crc32c.value(a), b) == crc32c.value(a + b)


def test_mask_known_value():
    # TensorFlow: Mask(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8, mod 2**32.
    # 0xe3069283 rotated right by 15 is 0x2507c60d; plus the delta is 0xc78ab0e5 (mod 2**32).
    assert crc32c.mask(0xE3069283) == 0xC78AB0E5
    assert crc32c.unmask(0xC78AB0E5) == 0xE3069283


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_mask_round_trip(crc):
    masked = crc32c.mask(crc)
    assert 0 <= masked < 2**32
    assert crc32c.unmask(masked) == crc
    assert masked != crc
    assert crc32c.mask(masked) != crc


def test_accepts_buffers():
    array = np.arange(10, dtype=np.float32)
    expected = crc32c.value(array.tobytes())
    assert crc32c.value(array.view(np.uint8)) == expected
    assert crc32c.value(memoryview(array.tobytes())) == expected
    assert crc32c.value(bytearray(array.tobytes())) == expected
