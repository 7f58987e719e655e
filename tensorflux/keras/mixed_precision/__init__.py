"""`tf.keras.mixed_precision` (TF 1.14/1.15): only its `experimental` namespace exists."""

from tensorflux.keras.mixed_precision import experimental

__all__ = ["experimental"]
