"""Neural-network ops: activations, softmax and losses, convolutions, pooling, normalization, CTC,
sampled losses, embeddings and dynamic RNNs.

The family facade: importing it registers every op, kernel and gradient of the family.
"""

from tensorflux.ops.nn import (
    activations,
    core,
    conv,
    conv3d,
    conv1d,
    pooling,
    pool3d,
    pool_argmax,
    pool_generic,
    fractional_pool,
    morphology,
    normalization,
    functions,
    conv_composites,
    ctc,
    sampled_losses,
    candidate_sampling,
    embedding,
    rnn,
    order_statistics,
)
