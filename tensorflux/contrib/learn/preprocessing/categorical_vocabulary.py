"""`CategoricalVocabulary`: categories to consecutive ids, id 0 for the unknown token."""

from __future__ import annotations

import collections

__all__ = ["CategoricalVocabulary"]


class CategoricalVocabulary:
    """Maps categories to ids 1, 2, ... in order of first sight (0 is `unknown_token`).

    Contract: while not frozen, `get` of a new category gives it the next id; once frozen,
    unknown categories get 0. `add` counts a category's frequency; `trim` keeps those seen
    more than `min_frequency` times (and fewer than `max_frequency` when > 0), renumbered
    by decreasing frequency, ties in sorted order.
    """

    def __init__(self, unknown_token="<UNK>", support_reverse=True):
        self._unknown_token = unknown_token
        self._mapping = {unknown_token: 0}
        self._support_reverse = support_reverse
        self._reverse_mapping = [unknown_token] if support_reverse else None
        self._freq = collections.defaultdict(int)
        self._freeze = False

    def __len__(self):
        return len(self._mapping)

    def freeze(self, freeze=True):
        """Stops (or, with False, resumes) giving ids to new categories."""
        self._freeze = freeze

    def get(self, category):
        """The id of `category` (a new id if not frozen, else 0 for an unknown one)."""
        if category not in self._mapping:
            if self._freeze:
                return 0
            self._mapping[category] = len(self._mapping)
            if self._support_reverse:
                self._reverse_mapping.append(category)
        return self._mapping[category]

    def add(self, category, count=1):
        """Counts `count` more sightings of `category` (giving it an id if needed)."""
        if self.get(category) <= 0:
            return
        self._freq[category] += count

    def trim(self, min_frequency, max_frequency=-1):
        """Keeps categories with min_frequency < count (< max_frequency when > 0),
        renumbered by decreasing count."""
        ordered = sorted(self._freq.items(), key=lambda item: (-item[1], str(item[0])))
        self._mapping = {self._unknown_token: 0}
        if self._support_reverse:
            self._reverse_mapping = [self._unknown_token]
        kept = {}
        for category, count in ordered:
            if 0 < max_frequency <= count:
                continue
            if count <= min_frequency:
                break
            self._mapping[category] = len(self._mapping)
            if self._support_reverse:
                self._reverse_mapping.append(category)
            kept[category] = count
        self._freq = collections.defaultdict(int, kept)

    def reverse(self, class_id):
        """The category of id `class_id`.

        Raises:
            ValueError: the vocabulary was made with support_reverse=False.
        """
        if not self._support_reverse:
            raise ValueError("This vocabulary wasn't initialized with support_reverse to "
                             "support reverse() function.")
        return self._reverse_mapping[class_id]

    def _state(self):
        categories = sorted(self._mapping, key=self._mapping.get)
        return {"unknown_token": self._unknown_token, "support_reverse": self._support_reverse,
                "categories": categories, "freq": [self._freq.get(c, 0) for c in categories],
                "frozen": self._freeze}

    @classmethod
    def _from_state(cls, state):
        vocabulary = cls(state["unknown_token"], state["support_reverse"])
        categories, freq = state["categories"], state["freq"]
        if not categories or categories[0] != state["unknown_token"] or \
                len(freq) != len(categories):
            raise ValueError("vocabulary file: categories must start with the unknown token "
                             "and have one frequency each.")
        for category, count in zip(categories[1:], freq[1:]):
            vocabulary.get(category)
            if count:
                vocabulary._freq[category] = int(count)
        vocabulary.freeze(bool(state["frozen"]))
        return vocabulary
