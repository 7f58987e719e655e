"""`tf.contrib.nn` (TF 1.15): alpha_dropout, scaled_softplus, sampled_sparse_softmax_loss,
nth_element, conv1d_transpose and the argument-flipped cross entropies. The other names raise
ContribNotProvidedError."""

from tensorflux.contrib import missing as _missing
from tensorflux.contrib.nn.variants import (
    alpha_dropout,
    deprecated_flipped_sigmoid_cross_entropy_with_logits,
    deprecated_flipped_softmax_cross_entropy_with_logits,
    deprecated_flipped_sparse_softmax_cross_entropy_with_logits,
    nth_element,
    sampled_sparse_softmax_loss,
    scaled_softplus,
)
from tensorflux.ops.nn.conv1d import conv1d_transpose

__all__ = ["alpha_dropout", "scaled_softplus", "sampled_sparse_softmax_loss", "nth_element",
           "conv1d_transpose", "deprecated_flipped_softmax_cross_entropy_with_logits",
           "deprecated_flipped_sparse_softmax_cross_entropy_with_logits",
           "deprecated_flipped_sigmoid_cross_entropy_with_logits"]

__getattr__ = _missing.module_getattr("contrib.nn", {
    "rank_sampled_softmax_loss": "tf.nn.sampled_softmax_loss",
    "*": "tf.nn",
})
