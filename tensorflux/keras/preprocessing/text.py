"""`tf.keras.preprocessing.text`: word splitting, hashing and the `Tokenizer` (the Keras 2.2 /
keras-preprocessing 1.1 behaviour TF 1.x shipped).

The Tokenizer numbers words by decreasing count (ties: first seen first), from 1; index 0 is
never a word. With `oov_token` the token takes index 1 and unknown words map to it. `num_words`
keeps only indices below it when converting, not when fitting.
"""

from __future__ import annotations

import collections
import hashlib
import json

import numpy as np

__all__ = ["text_to_word_sequence", "one_hot", "hashing_trick", "Tokenizer",
           "tokenizer_from_json"]

DEFAULT_FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'


def text_to_word_sequence(text, filters=DEFAULT_FILTERS, lower=True, split=" "):
    """The words of `text`: lower-cased, each filter character turned into `split`, empty
    pieces dropped."""
    if lower:
        text = text.lower()
    text = text.translate(str.maketrans({c: split for c in filters}))
    return [word for word in text.split(split) if word]


def hashing_trick(text, n, hash_function=None, filters=DEFAULT_FILTERS, lower=True,
                  split=" "):
    """Each word of `text` hashed to an index in [1, n - 1].

    Args:
        hash_function: None (Python's `hash`, randomised per process unless PYTHONHASHSEED is
            set), 'md5' (stable), or a function of a string returning an int.
    """
    if hash_function is None:
        hash_function = hash
    elif hash_function == "md5":
        def hash_function(word):
            return int(hashlib.md5(word.encode()).hexdigest(), 16)
    if n < 2:
        raise ValueError(f"hashing_trick needs n >= 2 (index 0 is reserved), got {n}")
    seq = text_to_word_sequence(text, filters=filters, lower=lower, split=split)
    return [hash_function(word) % (n - 1) + 1 for word in seq]


def one_hot(text, n, filters=DEFAULT_FILTERS, lower=True, split=" "):
    """`hashing_trick` with Python's `hash` (indices in [1, n - 1], collisions possible)."""
    return hashing_trick(text, n, hash_function=hash, filters=filters, lower=lower, split=split)


class Tokenizer:
    """Turns texts into sequences of word indices or into (count, tf-idf, ...) matrices.

    Args:
        num_words: keep only the `num_words - 1` most frequent words when converting.
        filters: characters removed from the texts; lower: lower-case them; split: separator.
        char_level: every character is a token.
        oov_token: a token standing for words not in the index (index 1).
    """

    def __init__(self, num_words=None, filters=DEFAULT_FILTERS, lower=True, split=" ",
                 char_level=False, oov_token=None, document_count=0, **kwargs):
        if "nb_words" in kwargs:
            num_words = kwargs.pop("nb_words")
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {sorted(kwargs)}")
        self.word_counts = collections.OrderedDict()
        self.word_docs = collections.defaultdict(int)
        self.filters = filters
        self.split = split
        self.lower = lower
        self.num_words = num_words
        self.document_count = document_count
        self.char_level = char_level
        self.oov_token = oov_token
        self.index_docs = collections.defaultdict(int)
        self.word_index = {}
        self.index_word = {}

    def _tokens(self, text):
        if self.char_level or isinstance(text, list):
            if self.lower:
                text = [t.lower() for t in text] if isinstance(text, list) else text.lower()
            return text
        return text_to_word_sequence(text, self.filters, self.lower, self.split)

    def fit_on_texts(self, texts):
        """Counts the words of `texts` (strings, or lists of tokens) and rebuilds the index."""
        for text in texts:
            self.document_count += 1
            seq = self._tokens(text)
            for word in seq:
                self.word_counts[word] = self.word_counts.get(word, 0) + 1
            for word in set(seq):
                self.word_docs[word] += 1
        ordered = sorted(self.word_counts.items(), key=lambda item: item[1], reverse=True)
        vocabulary = ([] if self.oov_token is None else [self.oov_token]) + \
            [word for word, _ in ordered]
        self.word_index = dict(zip(vocabulary, range(1, len(vocabulary) + 1)))
        self.index_word = {index: word for word, index in self.word_index.items()}
        for word, count in list(self.word_docs.items()):
            self.index_docs[self.word_index[word]] = count

    def fit_on_sequences(self, sequences):
        """Counts, per index, the sequences it appears in (needed by the 'tfidf' mode)."""
        self.document_count += len(sequences)
        for seq in sequences:
            for index in set(seq):
                self.index_docs[index] += 1

    def _keep(self, index):
        return not self.num_words or index < self.num_words

    def texts_to_sequences(self, texts):
        """Each text as a list of word indices (unknown or rare words: the OOV index or
        dropped)."""
        return list(self.texts_to_sequences_generator(texts))

    def texts_to_sequences_generator(self, texts):
        """`texts_to_sequences`, one text at a time."""
        oov = self.word_index.get(self.oov_token) if self.oov_token is not None else None
        for text in texts:
            vect = []
            for word in self._tokens(text):
                index = self.word_index.get(word)
                if index is not None and self._keep(index):
                    vect.append(index)
                elif oov is not None:
                    vect.append(oov)
            yield vect

    def sequences_to_texts(self, sequences):
        """Each sequence of indices back to a space-joined text."""
        return list(self.sequences_to_texts_generator(sequences))

    def sequences_to_texts_generator(self, sequences):
        """`sequences_to_texts`, one sequence at a time."""
        oov = self.word_index.get(self.oov_token) if self.oov_token is not None else None
        for seq in sequences:
            words = []
            for index in seq:
                word = self.index_word.get(index)
                if word is not None and self._keep(index):
                    words.append(word)
                elif oov is not None:
                    words.append(self.index_word[oov])
            yield " ".join(words)

    def texts_to_matrix(self, texts, mode="binary"):
        """A `[len(texts), num_words]` matrix of the texts (see `sequences_to_matrix`)."""
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode=mode)

    def sequences_to_matrix(self, sequences, mode="binary"):
        """A `[len(sequences), num_words]` matrix: 'binary' (presence), 'count', 'freq'
        (count / length) or 'tfidf' ((1 + log count) * log(1 + docs / (1 + docs with word))).

        Raises:
            ValueError: no `num_words` and no fitted index, 'tfidf' before fitting, or an
                unknown mode.
        """
        if mode not in ("binary", "count", "tfidf", "freq"):
            raise ValueError(f"Unknown vectorization mode: {mode}")
        if not self.num_words:
            if not self.word_index:
                raise ValueError("Specify a dimension (`num_words` argument), or fit on some "
                                 "text data first.")
            num_words = len(self.word_index) + 1
        else:
            num_words = self.num_words
        if mode == "tfidf" and not self.document_count:
            raise ValueError("Fit the Tokenizer on some data before using tfidf mode.")
        x = np.zeros((len(sequences), num_words))
        for i, seq in enumerate(sequences):
            if not seq:
                continue
            counts = collections.Counter(j for j in seq if j < num_words)
            for j, c in counts.items():
                if mode == "count":
                    x[i, j] = c
                elif mode == "freq":
                    x[i, j] = c / len(seq)
                elif mode == "binary":
                    x[i, j] = 1
                else:
                    tf = 1 + np.log(c)
                    idf = np.log(1 + self.document_count / (1 + self.index_docs.get(j, 0)))
                    x[i, j] = tf * idf
        return x

    def get_config(self):
        """The tokenizer's settings and fitted counts (JSON-ready)."""
        return {
            "num_words": self.num_words, "filters": self.filters, "lower": self.lower,
            "split": self.split, "char_level": self.char_level, "oov_token": self.oov_token,
            "document_count": self.document_count,
            "word_counts": json.dumps(self.word_counts), "word_docs": json.dumps(self.word_docs),
            "index_docs": json.dumps(self.index_docs), "index_word": json.dumps(self.index_word),
            "word_index": json.dumps(self.word_index),
        }

    def to_json(self, **kwargs):
        """The tokenizer as a JSON string (`tokenizer_from_json` reads it back)."""
        return json.dumps({"class_name": type(self).__name__, "config": self.get_config()},
                          **kwargs)


def tokenizer_from_json(json_string):
    """A Tokenizer from `Tokenizer.to_json()`'s string.

    Raises:
        ValueError: the string is not a Tokenizer's JSON.
    """
    data = json.loads(json_string)
    if not isinstance(data, dict) or "config" not in data:
        raise ValueError("tokenizer_from_json: expected the JSON of Tokenizer.to_json()")
    config = dict(data["config"])
    word_counts = json.loads(config.pop("word_counts"))
    word_docs = json.loads(config.pop("word_docs"))
    index_docs = {int(k): v for k, v in json.loads(config.pop("index_docs")).items()}
    index_word = {int(k): v for k, v in json.loads(config.pop("index_word")).items()}
    word_index = json.loads(config.pop("word_index"))
    tokenizer = Tokenizer(**config)
    tokenizer.word_counts = collections.OrderedDict(word_counts)
    tokenizer.word_docs = collections.defaultdict(int, word_docs)
    tokenizer.index_docs = collections.defaultdict(int, index_docs)
    tokenizer.index_word = index_word
    tokenizer.word_index = word_index
    return tokenizer
