"""`tf.keras.preprocessing`: sequences, text and images."""

from tensorflux.keras.preprocessing import image, sequence, text
