"""`tf.estimator.inputs`: input_fns over NumPy arrays and pandas DataFrames.

The returned input_fn yields `(features, labels)` batches from a `tf.data` pipeline (TF 1.15
fed a queue; the batches are the same): `num_epochs` passes over the data, shuffled with a
buffer of `queue_capacity` examples when `shuffle`, the last batch possibly smaller. pandas
is optional: `pandas_input_fn` raises ImportError naming it when it is missing.
"""

from __future__ import annotations

import numpy as np

from tensorflux.data import dataset_ops

__all__ = ["numpy_input_fn", "pandas_input_fn"]


def _check_shuffle(shuffle):
    if not isinstance(shuffle, bool):
        raise ValueError(f"shuffle must be provided and explicitly set as boolean (it is "
                         f"recommended to set it as True for training); got {shuffle}")


def _make_input_fn(features, labels, batch_size, num_epochs, shuffle, queue_capacity):
    def input_fn():
        data = features if labels is None else (features, labels)
        dataset = dataset_ops.Dataset.from_tensor_slices(data)
        if shuffle:
            dataset = dataset.shuffle(buffer_size=queue_capacity)
        dataset = dataset.repeat(num_epochs).batch(batch_size)
        batch = dataset.make_one_shot_iterator().get_next()
        return batch

    return input_fn


def _length(value):
    return len(value) if not isinstance(value, np.ndarray) else value.shape[0]


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None,
                   queue_capacity=1000, num_threads=1):
    """An input_fn returning batches of `x` (a dict of arrays, or one array) and `y`.

    Args:
        x: a NumPy array or a dict of arrays sharing their first dimension.
        y: None, an array or a dict of arrays (labels); with a dict `y`, no key may also be
            in `x`.
        batch_size: examples per batch.
        num_epochs: passes over the data (None: forever).
        shuffle: bool, required (TF raises when it is None).
        queue_capacity: the shuffle buffer size.
        num_threads: accepted for compatibility (batches are produced in order of reading).

    Returns:
        A function returning `(features, labels)` tensors (`features` alone when `y` is None).

    Raises:
        ValueError: shuffle not a bool; lengths of x and y differ; duplicate keys; an empty x.
        TypeError: x is not an array or dict.
    """
    _check_shuffle(shuffle)
    if isinstance(x, dict):
        if not x:
            raise ValueError("x cannot be an empty dict")
        features = {key: np.asarray(value) for key, value in x.items()}
    elif isinstance(x, (np.ndarray, list)):
        features = np.asarray(x)
    else:
        raise TypeError(f"x must be a dict or array; got {type(x).__name__}")
    labels = None
    if y is not None:
        if isinstance(y, dict):
            if not y:
                raise ValueError("y cannot be empty dict, use None instead.")
            duplicates = sorted(set(y) & set(features)) if isinstance(features, dict) else []
            if duplicates:
                raise ValueError(f"{len(duplicates)} duplicate keys are found in both x and y: "
                                 f"{duplicates}")
            labels = {key: np.asarray(value) for key, value in y.items()}
        else:
            labels = np.asarray(y)
    lengths = {_length(v) for v in (features.values() if isinstance(features, dict)
                                    else [features])}
    if labels is not None:
        lengths |= {_length(v) for v in (labels.values() if isinstance(labels, dict)
                                         else [labels])}
    if len(lengths) > 1:
        raise ValueError("Length of tensors in x and y is mismatched. All elements in x and y "
                         "must have the same length.")
    if batch_size is None or batch_size < 1:
        raise ValueError(f"batch_size must be positive; got {batch_size}")
    del num_threads
    return _make_input_fn(features, labels, batch_size, num_epochs, shuffle, queue_capacity)


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError("tf.estimator.inputs.pandas_input_fn needs pandas, which is not "
                          "installed (pip install pandas); numpy_input_fn takes the same "
                          "data as NumPy arrays.") from None
    return pandas


def pandas_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None,
                    queue_capacity=1000, num_threads=1, target_column="target"):
    """An input_fn returning batches of a pandas DataFrame `x` (one feature per column) and
    the Series (or DataFrame) `y`.

    Raises:
        ImportError: pandas is not installed.
        ValueError: shuffle not a bool; the indexes of x and y differ; `target_column` is
            already a column of x.
    """
    pandas = _pandas()
    _check_shuffle(shuffle)
    if not isinstance(x, pandas.DataFrame):
        raise TypeError(f"x must be a pandas DataFrame; got {type(x).__name__}")
    features = {str(column): x[column].values for column in x.columns}
    labels = None
    if y is not None:
        if target_column in x:
            raise ValueError(f"Cannot use name {target_column} for target column: DataFrame "
                             f"already has a column with that name: {list(x.columns)}")
        if not np.array_equal(x.index, y.index):
            raise ValueError(f"Index for x and y are mismatched.\nIndex for x: {x.index}\n"
                             f"Index for y: {y.index}\n")
        if isinstance(y, pandas.DataFrame):
            labels = {str(column): y[column].values for column in y.columns}
        else:
            labels = y.values
    return numpy_input_fn(features, labels, batch_size=batch_size, num_epochs=num_epochs,
                          shuffle=shuffle, queue_capacity=queue_capacity,
                          num_threads=num_threads)
