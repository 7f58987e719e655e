"""`tf.signal`: Fourier transforms, framing, windows, STFT, mel and cepstral features
(re-exports only)."""

from tensorflux.ops.signal.fft import (
    fft,
    fft2d,
    fft3d,
    fftshift,
    ifft,
    ifft2d,
    ifft3d,
    ifftshift,
    irfft,
    irfft2d,
    irfft3d,
    rfft,
    rfft2d,
    rfft3d,
)
from tensorflux.ops.signal.mel import (
    dct,
    idct,
    linear_to_mel_weight_matrix,
    mfccs_from_log_mel_spectrograms,
)
from tensorflux.ops.signal.spectral import (
    frame,
    hamming_window,
    hann_window,
    inverse_stft,
    inverse_stft_window_fn,
    overlap_and_add,
    stft,
)

__all__ = ["dct", "fft", "fft2d", "fft3d", "fftshift", "frame", "hamming_window", "hann_window",
           "idct", "ifft", "ifft2d", "ifft3d", "ifftshift", "inverse_stft",
           "inverse_stft_window_fn", "irfft", "irfft2d", "irfft3d", "linear_to_mel_weight_matrix",
           "mfccs_from_log_mel_spectrograms", "overlap_and_add", "rfft", "rfft2d", "rfft3d",
           "stft"]
