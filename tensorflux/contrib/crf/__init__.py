"""`tf.contrib.crf`: a linear-chain conditional random field (TF 1.15's API).

Scores, the log partition function (forward algorithm), the log-likelihood, graph Viterbi
decoding (`crf_decode`) and NumPy Viterbi decoding (`viterbi_decode`), plus the RNN cells the
forward and decoding passes are made of.
"""

from tensorflux.contrib.crf.crf import (CrfDecodeBackwardRnnCell, CrfDecodeForwardRnnCell,
                                        CrfForwardRnnCell, crf_binary_score, crf_decode,
                                        crf_forward, crf_log_likelihood, crf_log_norm,
                                        crf_multitag_sequence_score, crf_sequence_score,
                                        crf_unary_score, viterbi_decode)

__all__ = ["crf_sequence_score", "crf_multitag_sequence_score", "crf_log_norm",
           "crf_log_likelihood", "crf_unary_score", "crf_binary_score", "crf_forward",
           "crf_decode", "viterbi_decode", "CrfForwardRnnCell", "CrfDecodeForwardRnnCell",
           "CrfDecodeBackwardRnnCell"]
