"""`CategoricalProcessor`: rows of categorical values to rows of ids (one vocabulary per
column, or one shared), NaN as unknown (0)."""

from __future__ import annotations

import math

import numpy as np

from tensorflux.contrib.learn.preprocessing.categorical_vocabulary import CategoricalVocabulary

__all__ = ["CategoricalProcessor"]


def _rows(x):
    if hasattr(x, "itertuples"):  # a pandas DataFrame: its rows without the index
        return [tuple(row)[1:] for row in x.itertuples()]
    return [list(row) if hasattr(row, "__iter__") and not isinstance(row, str) else [row]
            for row in x]


def _is_nan(value):
    return isinstance(value, float) and math.isnan(value)


class CategoricalProcessor:
    """Maps each column's categories to ids 1, 2, ... (0: unknown or NaN).

    Raises:
        ValueError: (transform) rows longer than the fitted ones.
    """

    def __init__(self, min_frequency=0, share=False, vocabularies=None):
        self.min_frequency = min_frequency
        self.share = share
        self.vocabularies_ = vocabularies

    def freeze(self, freeze=True):
        """Freezes (or unfreezes) every vocabulary."""
        for vocabulary in self.vocabularies_ or []:
            vocabulary.freeze(freeze)

    def fit(self, x, unused_y=None):
        """Learns the vocabularies of the rows of `x`; returns self."""
        for row in _rows(x):
            if self.vocabularies_ is None:
                if self.share:
                    shared = CategoricalVocabulary()
                    self.vocabularies_ = [shared for _ in row]
                else:
                    self.vocabularies_ = [CategoricalVocabulary() for _ in row]
            for index, value in enumerate(row):
                if not _is_nan(value):
                    self._vocabulary(index).add(value)
        if self.min_frequency > 0:
            for vocabulary in {id(v): v for v in self.vocabularies_ or []}.values():
                vocabulary.trim(self.min_frequency)
        self.freeze()
        return self

    def fit_transform(self, x, unused_y=None):
        """`fit` then `transform`."""
        rows = _rows(x)
        self.fit(rows)
        return self.transform(rows)

    def transform(self, x):
        """Yields an int64 array of ids per row."""
        self.freeze()
        for row in _rows(x):
            yield np.array([0 if _is_nan(value) else self._vocabulary(index).get(value)
                            for index, value in enumerate(row)], dtype=np.int64)

    def _vocabulary(self, index):
        if self.vocabularies_ is None or index >= len(self.vocabularies_):
            raise ValueError(f"CategoricalProcessor: column {index} was not fitted "
                             f"({0 if self.vocabularies_ is None else len(self.vocabularies_)}"
                             f" columns).")
        return self.vocabularies_[index]
