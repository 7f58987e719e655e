"""`tf.data.experimental`: the transformations TF1 programs `apply()` most often.

Each returns a function `dataset -> dataset` for `Dataset.apply`; parallelism arguments are
accepted and do not change the elements produced.
"""

from __future__ import annotations

from tensorflux.data.batching import DenseToSparseBatchDataset, UnbatchDataset
from tensorflux.data.cardinality import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, cardinality
from tensorflux.data.dataset_ops import RangeDataset
from tensorflux.data.grouping import bucket_by_sequence_length, group_by_window
from tensorflux.data.iterator_ops import get_single_element
from tensorflux.data.iterator_state import make_saveable_from_iterator
from tensorflux.data.optional import Optional, get_next_as_optional
from tensorflux.data.options import (
    DistributeOptions,
    MapVectorizationOptions,
    OptimizationOptions,
    StatsOptions,
    ThreadingOptions,
)
from tensorflux.data.ordering import ChooseFromDatasets, IgnoreErrorsDataset, SampleFromDatasets
from tensorflux.data.random_source import RandomDataset
from tensorflux.data.readers import make_batched_features_dataset, make_csv_dataset
from tensorflux.data.scan import Reducer, group_by_reducer, scan
from tensorflux.data.selection import rejection_resample, take_while, unique
from tensorflux.data.sources import CsvDataset
from tensorflux.data.sql import SqlDataset
from tensorflux.data.writers import TFRecordWriter
from tensorflux.framework import dtypes
from tensorflux.ops.io.parsing import parse_example
from tensorflux.ops.math.casting import cast

AUTOTUNE = -1


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """`dataset.shuffle(buffer_size, seed).repeat(count)`, reshuffled at each repetition."""
    return lambda dataset: dataset.shuffle(buffer_size, seed=seed).repeat(count)


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    """`dataset.map(map_func).batch(batch_size, drop_remainder)`."""
    return lambda dataset: dataset.map(map_func).batch(batch_size, drop_remainder)


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None):
    """`dataset.interleave(map_func, cycle_length, block_length)` (deterministic order)."""
    return lambda dataset: dataset.interleave(map_func, cycle_length, block_length)


def unbatch():
    """Splits each element along its first axis into consecutive elements."""
    return UnbatchDataset


def dense_to_sparse_batch(batch_size, row_shape):
    """Batches elements of varying shape into SparseTensors of dense shape
    `[batch] + row_shape` (a -1 entry takes the batch's largest size)."""
    return lambda dataset: DenseToSparseBatchDataset(dataset, batch_size, row_shape)


def ignore_errors():
    """Drops the elements whose computation raised an error (e.g. a failed parse in `map`)."""
    return IgnoreErrorsDataset


def enumerate_dataset(start=0):
    """Pairs each element with its int64 index, counting from `start`."""
    return lambda dataset: dataset.enumerate(start)


def Counter(start=0, step=1, dtype=None):  # noqa: N802 - TF's name
    """An unbounded int64 dataset `start, start + step, ...`."""

    if dtype is not None and dtypes.as_dtype(dtype) is not dtypes.int64:
        return RangeDataset(start, 2**63 - 1 if step > 0 else -(2**63), step).map(
            lambda x: _cast(x, dtype))
    return RangeDataset(start, 2**63 - 1 if step > 0 else -(2**63), step)


def choose_from_datasets(datasets, choice_dataset):
    """Elements of `datasets[i]` for each `i` of `choice_dataset` (scalar int64); an exhausted
    dataset's turns are skipped."""
    return ChooseFromDatasets(datasets, choice_dataset)


def sample_from_datasets(datasets, weights=None, seed=None):
    """Elements of randomly chosen `datasets` (probabilities `weights`, uniform by default)
    until every dataset with a nonzero weight is exhausted."""
    return SampleFromDatasets(datasets, weights, seed)


def prefetch_to_device(device, buffer_size=None):
    """Identity here: elements are produced in the step that consumes them, on its device."""
    return lambda dataset: dataset


def copy_to_device(target_device, source_device="/cpu:0"):
    """Identity here: elements are produced in the step that consumes them, on its device."""
    return lambda dataset: dataset


def parse_example_dataset(features, num_parallel_calls=1):
    """Parses batches of serialized `tf.train.Example`s: `dataset.map(tf.parse_example)`."""

    return lambda dataset: dataset.map(lambda serialized: parse_example(serialized, features))


def _cast(x, dtype):
    return cast(x, dtype)


__all__ = ["AUTOTUNE", "RandomDataset", "make_saveable_from_iterator",
           "shuffle_and_repeat", "map_and_batch", "parallel_interleave", "unbatch",
           "dense_to_sparse_batch", "ignore_errors", "enumerate_dataset", "Counter",
           "choose_from_datasets",
           "sample_from_datasets", "group_by_window", "bucket_by_sequence_length",
           "get_single_element", "prefetch_to_device", "copy_to_device",
           "parse_example_dataset", "CsvDataset", "SqlDataset", "INFINITE_CARDINALITY",
           "UNKNOWN_CARDINALITY",
           "cardinality", "Optional", "get_next_as_optional", "DistributeOptions",
           "MapVectorizationOptions", "OptimizationOptions", "StatsOptions", "ThreadingOptions",
           "make_batched_features_dataset", "make_csv_dataset", "Reducer", "group_by_reducer",
           "scan", "rejection_resample", "take_while", "unique", "TFRecordWriter"]
