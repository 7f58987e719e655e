"""`tf.audio`: WAV decoding and encoding."""

from tensorflux.ops.signal.wav import decode_wav, encode_wav
