"""`tf.contrib.feature_column` (TF 1.15): the sequence feature columns and
`sequence_input_layer`, which builds the `[batch, T, width]` input of an RNN."""

from tensorflux.feature_column.sequence import (
    sequence_categorical_column_with_hash_bucket,
    sequence_categorical_column_with_identity,
    sequence_categorical_column_with_vocabulary_file,
    sequence_categorical_column_with_vocabulary_list,
    sequence_input_layer,
    sequence_numeric_column,
)

__all__ = ["sequence_categorical_column_with_hash_bucket",
           "sequence_categorical_column_with_identity",
           "sequence_categorical_column_with_vocabulary_file",
           "sequence_categorical_column_with_vocabulary_list", "sequence_input_layer",
           "sequence_numeric_column"]
