"""`tf.contrib.sparsemax`: sparsemax activations and the sparsemax loss (Martins & Astudillo,
2016, arXiv:1602.02068)."""

from tensorflux.contrib.sparsemax.sparsemax import sparsemax, sparsemax_loss

__all__ = ["sparsemax", "sparsemax_loss"]
