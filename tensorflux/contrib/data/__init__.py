"""`tf.contrib.data` as TensorFlow 1.15 has it.

In TF 1.15 this module holds the `tf.data.experimental` transformations under their contrib
names (programs of TF 1.6-1.12 call `tf.contrib.data.map_and_batch`, `parallel_interleave`,
`shuffle_and_repeat`, ...) plus a few helpers that stayed contrib-only:
`batch_and_drop_remainder`, `padded_batch_and_drop_remainder`, `sloppy_interleave`,
`reduce_dataset` and `assert_element_shape`. The dataset classes that lived here before TF 1.4
(`tf.contrib.data.TextLineDataset`, `Dataset`, ...) are gone in 1.15 as well; asking for them
names their `tf.data` home.
"""

from __future__ import annotations

import numpy as np

from tensorflux.contrib.missing import module_getattr
from tensorflux.data import experimental as _experimental
from tensorflux.data.sliding import sliding_window_batch
from tensorflux.framework import dtypes, nest
from tensorflux.framework.tensor_shape import as_shape
from tensorflux.ops.array.constants import constant, ensure_shape

__all__ = ["CsvDataset", "Counter", "Optional", "Reducer", "TFRecordWriter",
           "assert_element_shape", "batch_and_drop_remainder", "bucket_by_sequence_length",
           "choose_from_datasets", "copy_to_device", "dense_to_sparse_batch", "enumerate_dataset",
           "get_next_as_optional",
           "get_single_element", "group_by_reducer", "group_by_window", "ignore_errors",
           "make_batched_features_dataset", "make_csv_dataset", "map_and_batch",
           "padded_batch_and_drop_remainder", "parallel_interleave", "parse_example_dataset",
           "prefetch_to_device", "reduce_dataset", "rejection_resample", "sample_from_datasets",
           "scan", "shuffle_and_repeat", "sliding_window_batch", "sloppy_interleave", "unbatch",
           "unique"]

CsvDataset = _experimental.CsvDataset
Counter = _experimental.Counter
Optional = _experimental.Optional
Reducer = _experimental.Reducer
TFRecordWriter = _experimental.TFRecordWriter
bucket_by_sequence_length = _experimental.bucket_by_sequence_length
choose_from_datasets = _experimental.choose_from_datasets
copy_to_device = _experimental.copy_to_device
dense_to_sparse_batch = _experimental.dense_to_sparse_batch
enumerate_dataset = _experimental.enumerate_dataset
get_next_as_optional = _experimental.get_next_as_optional
get_single_element = _experimental.get_single_element
group_by_reducer = _experimental.group_by_reducer
group_by_window = _experimental.group_by_window
ignore_errors = _experimental.ignore_errors
make_batched_features_dataset = _experimental.make_batched_features_dataset
make_csv_dataset = _experimental.make_csv_dataset
map_and_batch = _experimental.map_and_batch
parallel_interleave = _experimental.parallel_interleave
parse_example_dataset = _experimental.parse_example_dataset
prefetch_to_device = _experimental.prefetch_to_device
rejection_resample = _experimental.rejection_resample
sample_from_datasets = _experimental.sample_from_datasets
scan = _experimental.scan
shuffle_and_repeat = _experimental.shuffle_and_repeat
unbatch = _experimental.unbatch
unique = _experimental.unique


def batch_and_drop_remainder(batch_size):
    """A transformation for `Dataset.apply`: batches of exactly `batch_size`, the last partial
    batch dropped (`dataset.batch(batch_size, drop_remainder=True)`)."""

    def _apply_fn(dataset):
        return dataset.batch(batch_size, drop_remainder=True)

    return _apply_fn


def padded_batch_and_drop_remainder(batch_size, padded_shapes, padding_values=None):
    """`Dataset.apply` transformation: `padded_batch(..., drop_remainder=True)`."""

    def _apply_fn(dataset):
        return dataset.padded_batch(batch_size, padded_shapes, padding_values,
                                    drop_remainder=True)

    return _apply_fn


def sloppy_interleave(map_func, cycle_length, block_length=1):
    """`parallel_interleave(map_func, cycle_length, block_length, sloppy=True)`."""
    return parallel_interleave(map_func, cycle_length, block_length, sloppy=True)


def reduce_dataset(dataset, reducer):
    """Reduces every element of `dataset` with `reducer` (a `Reducer`) into one value."""
    return get_single_element(
        dataset.apply(group_by_reducer(lambda *_: constant(np.int64(0), dtypes.int64), reducer)))


def assert_element_shape(expected_shapes):
    """`Dataset.apply` transformation asserting each component's shape.

    Args:
      expected_shapes: a shape (or nested structure of shapes) matching the elements.

    Returns:
      A function from a Dataset to one whose static shapes are the expected ones and whose
      elements are checked at run time.

    Raises:
      ValueError: (when applied) an expected shape incompatible with the dataset's.
    """

    def _apply_fn(dataset):
        actual_shapes = dataset.output_shapes
        flat_actual = nest.flatten(actual_shapes)
        # The expected shapes follow the dataset's structure down to its TensorShape leaves
        # (a leaf may be written as a list of dims).
        leaves = _shape_leaves(actual_shapes, expected_shapes)
        flat_expected = [as_shape(s) for s in leaves]
        for expected, actual in zip(flat_expected, flat_actual):
            if not expected.is_compatible_with(actual):
                raise ValueError(f"Incompatible input: expected shape {expected} is not "
                                 f"compatible with the dataset's shape {actual}")

        def _check(*element):
            value = element[0] if len(element) == 1 else element
            flat = nest.flatten(value)
            checked = [ensure_shape(t, s) for t, s in zip(flat, flat_expected)]
            return nest.pack_sequence_as(value, checked)

        return dataset.map(_check)

    return _apply_fn


def _shape_leaves(actual, expected) -> list:
    """`expected` flattened down to where `actual` has TensorShape leaves."""
    if not nest.is_nested(actual):
        return [expected]
    if len(actual) != len(expected) or isinstance(actual, dict) != isinstance(expected, dict):
        raise ValueError(f"assert_element_shape: expected shapes {expected!r} do not match "
                         f"the structure of the dataset's elements {actual!r}")
    if isinstance(actual, dict):
        return [leaf for key in sorted(actual) for leaf in _shape_leaves(actual[key],
                                                                         expected[key])]
    return [leaf for a, e in zip(actual, expected) for leaf in _shape_leaves(a, e)]


_GONE = {name: f"tf.data.{name}" for name in ("Dataset", "Iterator", "TextLineDataset",
                                              "TFRecordDataset", "FixedLengthRecordDataset")}
_GONE.update({
    "dense_to_sparse_batch": "not supported (datasets carry dense tensors only)",
    "*": "tf.data / tf.data.experimental",
})

__getattr__ = module_getattr("contrib.data", _GONE)
