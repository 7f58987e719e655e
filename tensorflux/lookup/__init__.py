"""`tf.lookup`: static hash and vocabulary tables and their initializers."""

from tensorflux.lookup import experimental
from tensorflux.ops.data_flow.lookup import (KeyValueTensorInitializer, StaticHashTable,
                                             StaticVocabularyTable, TextFileIndex,
                                             TextFileInitializer)
