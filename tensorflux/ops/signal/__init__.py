"""Signal processing: FFTs, framing, windows, short-time Fourier transforms and mel features.

The family facade: importing it registers every op, kernel and gradient of the family.
"""

from tensorflux.ops.signal import (
    fft,
    spectral,
    mel,
    wav,
)
