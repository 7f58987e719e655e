"""Debugging ops: Assert, CheckNumerics, Print, and the tf.assert_* checks.

The family facade: importing it registers every op, kernel and gradient of the family.
"""

from tensorflux.ops.debug import (
    logging,
    checks,
)
