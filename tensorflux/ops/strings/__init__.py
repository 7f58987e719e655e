"""String ops: conversions, text processing, unicode and hashing.

The family facade: importing it registers every op, kernel and gradient of the family.
"""

from tensorflux.ops.strings import (
    conversion,
    text,
    unicode,
    hashing,
    unicode_decode,
)
