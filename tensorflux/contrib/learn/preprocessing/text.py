"""`VocabularyProcessor`: documents to fixed-length arrays of word ids (TF 1.x contrib).

`save`/`restore` use a JSON file of ours (format "tensorflux.VocabularyProcessor", version 1:
max_document_length, min_frequency and the vocabulary's categories in id order with their
counts), never pickle: TF's pickled vocabularies cannot be read, re-fit them instead. A
custom `tokenizer_fn` is not saved; give it again to `restore`.
"""

from __future__ import annotations

import json
import re

import numpy as np

from tensorflux.contrib.learn.preprocessing.categorical_vocabulary import CategoricalVocabulary
from tensorflux.platform import gfile

__all__ = ["TOKENIZER_RE", "tokenizer", "ByteProcessor", "VocabularyProcessor"]

# Runs of capitals, capitalised words before another capital, and word characters with ' -.
TOKENIZER_RE = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z][a-z]+(?=[A-Z])|[\'\w\-]+", re.UNICODE)

_FORMAT = "tensorflux.VocabularyProcessor"


def tokenizer(iterator):
    """Yields the list of tokens (`TOKENIZER_RE` matches) of each string of `iterator`."""
    for value in iterator:
        yield TOKENIZER_RE.findall(value)


class ByteProcessor:
    """Maps documents to `max_document_length` UTF-8 bytes (uint8, 0-padded)."""

    def __init__(self, max_document_length):
        self.max_document_length = int(max_document_length)

    def fit(self, x):
        """Nothing to learn; returns self."""
        return self

    def fit_transform(self, x):
        """`transform`."""
        return self.transform(x)

    def transform(self, x):
        """Yields a uint8 array `[max_document_length]` per document."""
        for document in x:
            data = document.encode("utf-8") if isinstance(document, str) else bytes(document)
            buffer = np.frombuffer(data, dtype=np.uint8)[:self.max_document_length]
            out = np.zeros(self.max_document_length, np.uint8)
            out[:len(buffer)] = buffer
            yield out

    def reverse(self, x):
        """Yields the document of each byte array (trailing zeros dropped)."""
        for data in x:
            yield np.trim_zeros(np.asarray(data, np.uint8), trim="b").tobytes().decode("utf-8")


class VocabularyProcessor:
    """Maps documents to `max_document_length` word ids (0-padded; 0 is also unknown).

    Example:
        >>> vp = VocabularyProcessor(4)
        >>> np.array(list(vp.fit_transform(["a b c", "a a"])))
        array([[1, 2, 3, 0], [1, 1, 0, 0]])

    Raises:
        ValueError: max_document_length < 1.
    """

    def __init__(self, max_document_length, min_frequency=0, vocabulary=None,
                 tokenizer_fn=None):
        if max_document_length is None or int(max_document_length) < 1:
            raise ValueError(f"max_document_length must be >= 1; got {max_document_length}")
        self.max_document_length = int(max_document_length)
        self.min_frequency = min_frequency
        self.vocabulary_ = vocabulary if vocabulary is not None else CategoricalVocabulary()
        self._tokenizer = tokenizer_fn or tokenizer
        self._custom_tokenizer = tokenizer_fn is not None

    def fit(self, raw_documents, unused_y=None):
        """Learns the vocabulary of `raw_documents` (then trims and freezes it); returns
        self."""
        for tokens in self._tokenizer(raw_documents):
            for token in tokens:
                self.vocabulary_.add(token)
        if self.min_frequency > 0:
            self.vocabulary_.trim(self.min_frequency)
        self.vocabulary_.freeze()
        return self

    def fit_transform(self, raw_documents, unused_y=None):
        """`fit` then `transform` (an iterator of int64 arrays)."""
        documents = list(raw_documents)
        self.fit(documents)
        return self.transform(documents)

    def transform(self, raw_documents):
        """Yields an int64 array `[max_document_length]` of ids per document (truncated or
        0-padded)."""
        for tokens in self._tokenizer(raw_documents):
            word_ids = np.zeros(self.max_document_length, np.int64)
            for index, token in enumerate(tokens[:self.max_document_length]):
                word_ids[index] = self.vocabulary_.get(token)
            yield word_ids

    def reverse(self, documents):
        """Yields the space-joined tokens of each id sequence (padding shows as the unknown
        token)."""
        for item in documents:
            yield " ".join(self.vocabulary_.reverse(int(class_id)) for class_id in item)

    def save(self, filename):
        """Writes this processor to `filename` as JSON (see the module docstring)."""
        state = {"format": _FORMAT, "version": 1,
                 "max_document_length": self.max_document_length,
                 "min_frequency": self.min_frequency,
                 "custom_tokenizer": self._custom_tokenizer,
                 "vocabulary": self.vocabulary_._state()}
        with gfile.GFile(filename, "w") as f:
            f.write(json.dumps(state))

    @classmethod
    def restore(cls, filename, tokenizer_fn=None):
        """The processor `save` wrote to `filename`.

        Raises:
            ValueError: the file is not one of ours (e.g. TF's pickle), or malformed.
        """
        with gfile.GFile(filename, "rb") as f:
            raw = f.read()
        try:
            state = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
        except (UnicodeDecodeError, ValueError):
            state = None
        if not isinstance(state, dict) or state.get("format") != _FORMAT:
            raise ValueError(f"{filename} is not a tensorflux VocabularyProcessor file (TF's "
                             f"pickled vocabularies are not read: fit the processor again "
                             f"and save it).")
        if state.get("version") != 1:
            raise ValueError(f"{filename}: unsupported version {state.get('version')!r}")
        vocabulary = CategoricalVocabulary._from_state(state["vocabulary"])
        return cls(state["max_document_length"], state["min_frequency"], vocabulary,
                   tokenizer_fn)
