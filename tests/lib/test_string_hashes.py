"""TensorFlow's string hashes (lib/hashing/) against values TensorFlow 2.21
computed for the same strings, one string per length class of each algorithm."""

import pytest

from tensorflux.lib.hashing import farmhash, legacy_hash, siphash

STRINGS = [b"", b"x", b"abcd", b"hello world", b"0123456789abcdefg",
           b"The quick brown fox jumps over the lazy dog", b"z" * 64, b"y" * 65, bytes(range(200))]
# tf.fingerprint(strings) read as little-endian uint64.
FINGERPRINTS = [11160318154034397263, 13942860475667539970, 1897425971756105985,
                6381520714923946011, 12024047538191061578, 12375473906752639284,
                294799756062990872, 13246502507848426076, 525935771297148851]
# tf.strings.to_hash_bucket(strings, 2**63 - 1) and to_hash_bucket_strong(..., key below).
LEGACY = [105434511174508092, 8493430383563126769, 5015987189207562374, 936430787915428848,
          6397438232669942879, 6299166825487821026, 4772445071631715737, 3145566749894467939,
          8797224591143368235]
STRONG_KEY = (0x0706050403020100, 0x0F0E0D0C0B0A0908)
STRONG = [8246050544436514353, 3979855205919345955, 3458854162872739767, 7877175944527304195,
          5717972309748279145, 5919806912997584868, 6462367346056340266, 7270508255259217333,
          1190252007736809041]
INT63 = (1 << 63) - 1


@pytest.mark.parametrize("index", range(len(STRINGS)))
def test_hashes_equal_tensorflow(index):
    data = STRINGS[index]
    assert farmhash.fingerprint64(data) == FINGERPRINTS[index]
    assert legacy_hash.hash64(data) % INT63 == LEGACY[index]
    assert siphash.siphash24(data, *STRONG_KEY) % INT63 == STRONG[index]


def test_text_is_hashed_as_utf8_and_cat64_mixes_both_sides():
    assert farmhash.fingerprint64("héllo") == farmhash.fingerprint64("héllo".encode())
    a, b = farmhash.fingerprint64(b"a"), farmhash.fingerprint64(b"b")
    ab, ba = farmhash.fingerprint_cat64(a, b), farmhash.fingerprint_cat64(b, a)
    assert ab != ba and 0 <= ab < 2 ** 64
    # SparseCross's hashed cross of ("a", "b") with hash_key 123, 1000 buckets (TF: 238).
    key = 123
    assert farmhash.fingerprint_cat64(farmhash.fingerprint_cat64(key, a), b) % 1000 \
        == 238
