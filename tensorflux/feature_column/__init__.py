"""`tf.feature_column`: declarative feature transformations feeding `input_layer` (TF1 API)."""

from tensorflux.feature_column.categorical import (bucketized_column,
                                                   categorical_column_with_hash_bucket,
                                                   categorical_column_with_identity,
                                                   categorical_column_with_vocabulary_list,
                                                   numeric_column)
from tensorflux.feature_column.crossed import crossed_column
from tensorflux.feature_column.dense import (embedding_column, indicator_column, input_layer,
                                             make_parse_example_spec)
from tensorflux.feature_column.linear import linear_model
from tensorflux.feature_column.sequence import (
    sequence_categorical_column_with_hash_bucket,
    sequence_categorical_column_with_identity,
    sequence_categorical_column_with_vocabulary_file,
    sequence_categorical_column_with_vocabulary_list,
    sequence_numeric_column,
)
from tensorflux.feature_column.shared_embedding import shared_embedding_columns
from tensorflux.feature_column.vocabulary_file import categorical_column_with_vocabulary_file
from tensorflux.feature_column.weighted import weighted_categorical_column

__all__ = ["bucketized_column", "categorical_column_with_hash_bucket",
           "categorical_column_with_identity", "categorical_column_with_vocabulary_file",
           "categorical_column_with_vocabulary_list", "crossed_column", "embedding_column",
           "indicator_column", "input_layer", "linear_model", "make_parse_example_spec",
           "numeric_column", "sequence_categorical_column_with_hash_bucket",
           "sequence_categorical_column_with_identity",
           "sequence_categorical_column_with_vocabulary_file",
           "sequence_categorical_column_with_vocabulary_list", "sequence_numeric_column",
           "shared_embedding_columns", "weighted_categorical_column"]
