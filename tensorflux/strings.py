"""`tf.strings`: string ops under their `tf.compat.v1.strings` names."""

from tensorflux.ops.strings.hashing import string_to_hash_bucket as to_hash_bucket
from tensorflux.ops.strings.hashing import string_to_hash_bucket_fast as to_hash_bucket_fast
from tensorflux.ops.strings.hashing import (
    string_to_hash_bucket_strong as to_hash_bucket_strong,
)
from tensorflux.ops.strings.conversion import as_string, reduce_join
from tensorflux.ops.strings.conversion import string_format as format  # noqa: A004 - TF name
from tensorflux.ops.strings.conversion import string_join as join
from tensorflux.ops.strings.conversion import string_to_number as to_number
from tensorflux.ops.strings.text import (
    lower,
    regex_full_match,
    regex_replace,
    split,
    substr,
    upper,
)
from tensorflux.ops.strings.text import string_length as length
from tensorflux.ops.strings.text import string_strip as strip
from tensorflux.ops.strings.unicode import (
    ngrams,
    unicode_encode,
    unicode_script,
    unicode_transcode,
    unsorted_segment_join,
)

from tensorflux.ops.strings.unicode_decode import (
    bytes_split,
    unicode_decode,
    unicode_decode_with_offsets,
    unicode_split,
    unicode_split_with_offsets,
)

__all__ = ["as_string", "format", "join", "length", "lower", "reduce_join", "regex_full_match",
           "regex_replace", "split", "strip", "substr", "to_hash_bucket", "to_hash_bucket_fast",
           "to_hash_bucket_strong", "to_number", "upper"]
__all__ += ["ngrams", "unicode_encode", "unicode_script", "unicode_transcode",
            "unsorted_segment_join"]

__all__ += ["bytes_split", "unicode_decode", "unicode_decode_with_offsets", "unicode_split",
            "unicode_split_with_offsets"]
