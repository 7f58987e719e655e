"""`tf.contrib.seq2seq`: decoders, helpers, attention and beam search (TF 1.15 API)."""

from tensorflux.contrib.seq2seq.attention_wrapper import (AttentionMechanism, AttentionWrapper,
                                                          AttentionWrapperState, BahdanauAttention,
                                                          LuongAttention, hardmax, safe_cumprod)
from tensorflux.contrib.seq2seq.basic_decoder import BasicDecoder, BasicDecoderOutput
from tensorflux.contrib.seq2seq.beam_search_decoder import (BeamSearchDecoder,
                                                            BeamSearchDecoderOutput,
                                                            BeamSearchDecoderState,
                                                            FinalBeamSearchDecoderOutput,
                                                            tile_batch)
from tensorflux.contrib.seq2seq.beam_search_ops import gather_tree
from tensorflux.contrib.seq2seq.decoder import Decoder, dynamic_decode
from tensorflux.contrib.seq2seq.helper import (CustomHelper, GreedyEmbeddingHelper, Helper,
                                               InferenceHelper, SampleEmbeddingHelper,
                                               ScheduledEmbeddingTrainingHelper,
                                               ScheduledOutputTrainingHelper, TrainingHelper)
from tensorflux.contrib.seq2seq.loss import SequenceLoss, sequence_loss
from tensorflux.contrib.seq2seq.monotonic_attention import (BahdanauMonotonicAttention,
                                                            LuongMonotonicAttention,
                                                            monotonic_attention)

__all__ = ["BasicDecoder", "BasicDecoderOutput", "Decoder", "dynamic_decode", "Helper",
           "CustomHelper", "TrainingHelper", "GreedyEmbeddingHelper", "SampleEmbeddingHelper",
           "InferenceHelper", "ScheduledEmbeddingTrainingHelper",
           "ScheduledOutputTrainingHelper", "sequence_loss",
           "AttentionMechanism", "AttentionWrapper",
           "AttentionWrapperState", "BahdanauAttention", "LuongAttention", "hardmax",
           "safe_cumprod", "BeamSearchDecoder", "BeamSearchDecoderOutput",
           "BeamSearchDecoderState", "FinalBeamSearchDecoderOutput", "tile_batch",
           "gather_tree", "BahdanauMonotonicAttention", "LuongMonotonicAttention",
           "monotonic_attention", "SequenceLoss"]
