"""`tf.nn`: neural-network ops, RNN helpers and losses. One import line per source module."""
from tensorflux.layers import rnn_cell
from tensorflux.layers.rnn_cell import static_bidirectional_rnn, static_rnn
from tensorflux.ops.nn.activations import (elu, leaky_relu, relu, relu6, selu, softplus,
                                           softsign)
from tensorflux.ops.nn.core import bias_add, in_top_k, l2_loss, log_softmax, softmax, top_k
from tensorflux.ops.nn.functions import (batch_normalization, dropout, embedding_lookup,
                                         fused_batch_norm, l2_normalize,
                                         local_response_normalization, log_poisson_loss, lrn,
                                         moments, relu_layer, sigmoid_cross_entropy_with_logits,
                                         softmax_cross_entropy_with_logits,
                                         softmax_cross_entropy_with_logits_v2,
                                         sparse_softmax_cross_entropy_with_logits,
                                         weighted_cross_entropy_with_logits, xw_plus_b, swish, silu,
                                         crelu, sufficient_statistics, normalize_moments,
                                         weighted_moments)
from tensorflux.ops.nn.conv import (atrous_conv2d, convolution, conv2d, conv2d_backprop_filter,
                                    conv2d_backprop_input, conv2d_transpose, depthwise_conv2d,
                                    depthwise_conv2d_native,
                                    depthwise_conv2d_native_backprop_filter,
                                    depthwise_conv2d_native_backprop_input, separable_conv2d)
from tensorflux.ops.nn.pooling import avg_pool, avg_pool2d, max_pool, max_pool2d
from tensorflux.ops.math.unary import sigmoid, tanh
from tensorflux.ops.nn.rnn import bidirectional_dynamic_rnn, dynamic_rnn, raw_rnn
from tensorflux.ops.nn.candidate_sampling import (all_candidate_sampler, compute_accidental_hits,
                                                  fixed_unigram_candidate_sampler,
                                                  learned_unigram_candidate_sampler,
                                                  log_uniform_candidate_sampler,
                                                  uniform_candidate_sampler)
from tensorflux.ops.nn.sampled_losses import nce_loss, sampled_softmax_loss
from tensorflux.ops.nn.embedding import (embedding_lookup_sparse, safe_embedding_lookup_sparse)
from tensorflux.ops.array.diagonal import depth_to_space, space_to_depth
from tensorflux.ops.array.space_batch import space_to_batch
from tensorflux.ops.nn.conv1d import avg_pool1d, conv1d, conv1d_transpose, max_pool1d
from tensorflux.ops.math.histogram import zero_fraction
from tensorflux.ops.nn.pool_argmax import max_pool_with_argmax
from tensorflux.ops.nn.pool3d import avg_pool3d, max_pool3d
from tensorflux.ops.nn.conv3d import (conv3d, conv3d_backprop_filter, conv3d_backprop_filter_v2,
                                      conv3d_transpose)  # noqa: E501
from tensorflux.ops.nn.pool_generic import avg_pool_v2, max_pool_v2, pool
from tensorflux.ops.nn.ctc import (collapse_repeated, ctc_beam_search_decoder, ctc_greedy_decoder,
                                   ctc_loss, ctc_loss_v2, ctc_unique_labels,
                                   ctc_beam_search_decoder_v2)
from tensorflux.ops.nn.morphology import dilation2d, erosion2d
from tensorflux.ops.nn.conv_composites import (atrous_conv2d_transpose, batch_norm_with_global_normalization, conv_transpose, depthwise_conv2d_backprop_filter, depthwise_conv2d_backprop_input, with_space_to_batch)  # noqa: E501
from tensorflux.ops.nn.fractional_pool import fractional_avg_pool, fractional_max_pool
from tensorflux.losses.replica_scaling import compute_average_loss, scale_regularization_loss
