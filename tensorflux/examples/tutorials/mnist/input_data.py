"""`tensorflow.examples.tutorials.mnist.input_data`: `read_data_sets` of
`tf.contrib.learn.datasets.mnist`. tensorflux never downloads: the four MNIST files must be in
the directory given (a missing one raises FileNotFoundError naming it and where to get it)."""

from tensorflux.contrib.learn.datasets.base import maybe_download
from tensorflux.contrib.learn.datasets.mnist import (
                                                     DataSet,
                                                     dense_to_one_hot,
                                                     extract_images,
                                                     extract_labels,
                                                     read_data_sets,
)

__all__ = ["DataSet", "dense_to_one_hot", "extract_images", "extract_labels", "maybe_download",
           "read_data_sets"]
