"""`tf.contrib.learn.preprocessing`: `VocabularyProcessor` (text to padded id arrays),
`CategoricalVocabulary` and the default `tokenizer`."""

from tensorflux.contrib.learn.preprocessing.categorical_vocabulary import CategoricalVocabulary
from tensorflux.contrib.learn.preprocessing.text import (TOKENIZER_RE, VocabularyProcessor,
                                                         tokenizer)

__all__ = ["CategoricalVocabulary", "TOKENIZER_RE", "VocabularyProcessor", "tokenizer"]
