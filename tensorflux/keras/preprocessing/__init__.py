"""`tf.keras.preprocessing`: sequence padding."""

from tensorflux.keras.preprocessing import sequence
