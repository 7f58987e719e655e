"""`tf.contrib.learn.preprocessing`: `VocabularyProcessor` (text to padded id arrays),
`ByteProcessor`, `CategoricalProcessor`, `CategoricalVocabulary` and the default `tokenizer`."""

from tensorflux.contrib.learn.preprocessing.categorical import CategoricalProcessor
from tensorflux.contrib.learn.preprocessing.categorical_vocabulary import CategoricalVocabulary
from tensorflux.contrib.learn.preprocessing.text import (TOKENIZER_RE, ByteProcessor,
                                                         VocabularyProcessor, tokenizer)

__all__ = ["ByteProcessor", "CategoricalProcessor", "CategoricalVocabulary", "TOKENIZER_RE",
           "VocabularyProcessor", "tokenizer"]
