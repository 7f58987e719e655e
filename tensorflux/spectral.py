"""`tf.spectral`: the TF1 Fourier and cosine transforms (re-exports only)."""

from tensorflux.ops.signal.fft import (
    fft,
    fft2d,
    fft3d,
    ifft,
    ifft2d,
    ifft3d,
    irfft,
    irfft2d,
    irfft3d,
    rfft,
    rfft2d,
    rfft3d,
)
from tensorflux.ops.signal.mel import dct, idct

__all__ = ["dct", "fft", "fft2d", "fft3d", "idct", "ifft", "ifft2d", "ifft3d", "irfft", "irfft2d",
           "irfft3d", "rfft", "rfft2d", "rfft3d"]
