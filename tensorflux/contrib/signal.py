"""`tf.contrib.signal`: TF 1.15's contrib names for tf.signal (framing, windows, STFT, mel and
MFCC features)."""

from tensorflux.contrib import missing as _missing
from tensorflux.ops.signal.mel import linear_to_mel_weight_matrix, mfccs_from_log_mel_spectrograms
from tensorflux.ops.signal.spectral import (
    frame,
    hamming_window,
    hann_window,
    inverse_stft,
    inverse_stft_window_fn,
    overlap_and_add,
    stft,
)

__all__ = ["frame", "hamming_window", "hann_window", "inverse_stft", "inverse_stft_window_fn",
           "linear_to_mel_weight_matrix", "mfccs_from_log_mel_spectrograms", "overlap_and_add",
           "stft"]

__getattr__ = _missing.module_getattr("contrib.signal", {"*": "tf.signal"})
