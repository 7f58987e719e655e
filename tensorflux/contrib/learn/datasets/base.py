"""`tf.contrib.learn.datasets.base`: the Datasets/Dataset tuples and CSV loaders (no downloads).

`maybe_download` never fetches anything: it returns the path when the file is already in
`work_directory` and otherwise raises FileNotFoundError naming the file and its URL.
"""

from __future__ import annotations

import collections
import csv
import os

import numpy as np

__all__ = ["Datasets", "Dataset", "load_csv_with_header", "load_csv_without_header",
           "maybe_download"]

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])
Dataset = collections.namedtuple("Dataset", ["data", "target"])


def load_csv_with_header(filename, target_dtype, features_dtype, target_column=-1):
    """Loads a CSV whose header row is `n_samples,n_features,...`.

    Returns:
        Dataset(data [n_samples, n_features], target [n_samples]).

    Raises:
        ValueError: a row of the wrong length or the wrong number of rows.
    """
    with open(filename, newline="") as f:
        rows = csv.reader(f)
        header = next(rows)
        n_samples, n_features = int(header[0]), int(header[1])
        data = np.zeros((n_samples, n_features), dtype=features_dtype)
        target = np.zeros((n_samples,), dtype=target_dtype)
        count = 0
        for i, row in enumerate(rows):
            if i >= n_samples:
                raise ValueError(f"{filename}: more than the {n_samples} rows in its header")
            if len(row) != n_features + 1:
                raise ValueError(f"{filename}: row {i + 1} has {len(row)} values, expected "
                                 f"{n_features + 1}")
            target[i] = np.asarray(row.pop(target_column), dtype=target_dtype)
            data[i] = np.asarray(row, dtype=features_dtype)
            count += 1
    if count != n_samples:
        raise ValueError(f"{filename}: {count} rows, the header says {n_samples}")
    return Dataset(data=data, target=target)


def load_csv_without_header(filename, target_dtype, features_dtype, target_column=-1):
    """Loads a header-less CSV; the `target_column` column is the target.

    Returns:
        Dataset(data, target).
    """
    data, target = [], []
    with open(filename, newline="") as f:
        for row in csv.reader(f):
            target.append(row.pop(target_column))
            data.append(np.asarray(row, dtype=features_dtype))
    return Dataset(data=np.array(data), target=np.array(target).astype(target_dtype))


def maybe_download(filename, work_directory, source_url):
    """The path of `filename` in `work_directory` (tensorflux never downloads).

    Raises:
        FileNotFoundError: the file is not there; the message names where to get it.
    """
    path = os.path.join(work_directory, filename)
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"{path} not found. tensorflux never downloads data sets: fetch {source_url} "
            f"yourself and place it in {work_directory}.")
    return path
