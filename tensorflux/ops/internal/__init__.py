"""Ops users never build: _Send/_Recv/_Arg, lossy-transfer casts, fused kernels.

The family facade: importing it registers every op, kernel and gradient of the family.
"""

from tensorflux.ops.internal import (
    sendrecv,
    transfer,
    fused,
    fused_elementwise,
    lstm_pointwise,
    lstm_inputs,
    moving_average,
)
