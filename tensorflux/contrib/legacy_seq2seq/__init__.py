"""`tf.contrib.legacy_seq2seq`: static seq2seq models over lists of time steps."""

from tensorflux.contrib.legacy_seq2seq.seq2seq import (attention_decoder, basic_rnn_seq2seq,
                                                       embedding_attention_decoder,
                                                       embedding_attention_seq2seq,
                                                       embedding_rnn_decoder, embedding_rnn_seq2seq,
                                                       embedding_tied_rnn_seq2seq,
                                                       model_with_buckets, one2many_rnn_seq2seq,
                                                       rnn_decoder, sequence_loss,
                                                       sequence_loss_by_example, tied_rnn_seq2seq)

__all__ = ["attention_decoder", "basic_rnn_seq2seq", "embedding_attention_decoder",
           "embedding_attention_seq2seq", "embedding_rnn_decoder", "embedding_rnn_seq2seq",
           "embedding_tied_rnn_seq2seq", "model_with_buckets", "one2many_rnn_seq2seq",
           "rnn_decoder", "sequence_loss", "sequence_loss_by_example", "tied_rnn_seq2seq"]
