"""`tf.data` for TF1 graph mode: datasets, iterators and record readers.

See `dataset_ops.py` for the pipeline contract and `iterator_ops.py` for the graph ops.
"""

from tensorflux.data import experimental
from tensorflux.data.cardinality import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from tensorflux.data.dataset_ops import Dataset
from tensorflux.data.iterator_ops import (Iterator, get_output_classes, get_output_shapes,
                                          get_output_types, make_initializable_iterator,
                                          make_one_shot_iterator)
from tensorflux.data.options import Options
from tensorflux.data.sources import FixedLengthRecordDataset, TextLineDataset, TFRecordDataset

DatasetV1 = Dataset

__all__ = ["Dataset", "DatasetV1", "Iterator", "TFRecordDataset", "TextLineDataset",
           "FixedLengthRecordDataset", "make_one_shot_iterator", "make_initializable_iterator",
           "get_output_types", "get_output_shapes", "get_output_classes", "experimental",
           "Options", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]
