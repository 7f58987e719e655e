"""`tf.contrib.learn.datasets.mnist`: MNIST in TF 1.15's `read_data_sets` API, local files only.

`read_data_sets(train_dir)` reads the four idx files (gzip-compressed `.gz`, or uncompressed
under the same name without `.gz`) from `train_dir`; it never downloads. Images become
float32 in [0, 1] (or stay uint8), flattened to 784 columns unless `reshape=False`; labels are
ints or one-hot rows. `DataSet.next_batch` walks the examples in epochs, reshuffling at each
epoch boundary as TF did.
"""

from __future__ import annotations

import gzip
import os

import numpy as np

from tensorflux.contrib.learn.datasets.base import Datasets
from tensorflux.framework import dtypes

__all__ = ["DataSet", "read_data_sets", "extract_images", "extract_labels", "dense_to_one_hot",
           "load_mnist", "DEFAULT_SOURCE_URL", "TRAIN_IMAGES", "TRAIN_LABELS", "TEST_IMAGES",
           "TEST_LABELS"]

DEFAULT_SOURCE_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"
TRAIN_IMAGES = "train-images-idx3-ubyte.gz"
TRAIN_LABELS = "train-labels-idx1-ubyte.gz"
TEST_IMAGES = "t10k-images-idx3-ubyte.gz"
TEST_LABELS = "t10k-labels-idx1-ubyte.gz"


def _read32(stream) -> int:
    data = stream.read(4)
    if len(data) != 4:
        raise ValueError(f"Truncated MNIST file: {getattr(stream, 'name', stream)}")
    return int(np.frombuffer(data, dtype=">u4")[0])


def _read_bytes(stream, count, what):
    data = stream.read(count)
    if len(data) != count:
        raise ValueError(f"Truncated MNIST {what} file {getattr(stream, 'name', stream)}: "
                         f"expected {count} bytes of data, got {len(data)}")
    return np.frombuffer(data, dtype=np.uint8)


def _open(f):
    """A binary stream of the (maybe gzip-compressed) file object `f`."""
    if hasattr(f, "peek"):
        head = f.peek(2)[:2]
    elif hasattr(f, "seekable") and f.seekable():
        position = f.tell()
        head = f.read(2)
        f.seek(position)
    else:
        head = b""
    return gzip.GzipFile(fileobj=f) if head == b"\x1f\x8b" else f


def extract_images(f):
    """[index, y, x, 1] uint8 images from an idx3 file object (gzip or raw).

    Raises:
        ValueError: the magic number is not 2051, or the file is truncated.
    """
    stream = _open(f)
    magic = _read32(stream)
    if magic != 2051:
        raise ValueError(f"Invalid magic number {magic} in MNIST image file: "
                         f"{getattr(f, 'name', f)}")
    num_images, rows, cols = _read32(stream), _read32(stream), _read32(stream)
    data = _read_bytes(stream, rows * cols * num_images, "image")
    return data.reshape(num_images, rows, cols, 1)


def dense_to_one_hot(labels_dense, num_classes):
    """[n] class ids -> [n, num_classes] one-hot uint8 rows."""
    labels_dense = np.asarray(labels_dense)
    one_hot = np.zeros((labels_dense.shape[0], num_classes), dtype=np.uint8)
    one_hot[np.arange(labels_dense.shape[0]), labels_dense.astype(np.int64)] = 1
    return one_hot


def extract_labels(f, one_hot=False, num_classes=10):
    """[index] uint8 labels (or one-hot rows) from an idx1 file object (gzip or raw).

    Raises:
        ValueError: the magic number is not 2049, or the file is truncated.
    """
    stream = _open(f)
    magic = _read32(stream)
    if magic != 2049:
        raise ValueError(f"Invalid magic number {magic} in MNIST label file: "
                         f"{getattr(f, 'name', f)}")
    labels = _read_bytes(stream, _read32(stream), "label")
    return dense_to_one_hot(labels, num_classes) if one_hot else labels


class DataSet:
    """Images and labels with epoch-wise shuffled minibatches.

    Contract: `next_batch(n)` returns n examples; an epoch's last batch is completed with
    the first examples of the next (reshuffled) epoch, and `epochs_completed` counts the
    boundaries crossed.
    """

    def __init__(self, images, labels, fake_data=False, one_hot=False, dtype=dtypes.float32,
                 reshape=True, seed=None):
        dtype = dtypes.as_dtype(dtype).base_dtype
        if dtype not in (dtypes.uint8, dtypes.float32):
            raise TypeError(f"Invalid image dtype {dtype!r}, expected uint8 or float32")
        self._rng = np.random.RandomState(seed) if seed is not None else np.random
        if fake_data:
            self._num_examples = 10000
            self.one_hot = one_hot
        else:
            images, labels = np.asarray(images), np.asarray(labels)
            if images.shape[0] != labels.shape[0]:
                raise ValueError(f"images.shape: {images.shape} labels.shape: {labels.shape}")
            self._num_examples = images.shape[0]
            if reshape:
                if images.ndim != 4 or images.shape[3] != 1:
                    raise ValueError(f"reshape=True needs [n, rows, cols, 1] images, got "
                                     f"{images.shape}")
                images = images.reshape(images.shape[0], images.shape[1] * images.shape[2])
            if dtype == dtypes.float32:
                images = images.astype(np.float32) * np.float32(1.0 / 255.0)
        self._images = images
        self._labels = labels
        self._epochs_completed = 0
        self._index_in_epoch = 0

    images = property(lambda self: self._images)
    labels = property(lambda self: self._labels)
    num_examples = property(lambda self: self._num_examples)
    epochs_completed = property(lambda self: self._epochs_completed)

    def _shuffle(self):
        perm = np.arange(self._num_examples)
        self._rng.shuffle(perm)
        self._images = self._images[perm]
        self._labels = self._labels[perm]

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        """The next `batch_size` (images, labels) of this data set."""
        if fake_data:
            fake_image = [1] * 784
            fake_label = [1] + [0] * 9 if self.one_hot else 0
            return ([fake_image for _ in range(batch_size)],
                    [fake_label for _ in range(batch_size)])
        start = self._index_in_epoch
        if self._epochs_completed == 0 and start == 0 and shuffle:
            self._shuffle()
        if start + batch_size > self._num_examples:
            self._epochs_completed += 1
            rest = self._num_examples - start
            images_rest = self._images[start:self._num_examples]
            labels_rest = self._labels[start:self._num_examples]
            if shuffle:
                self._shuffle()
            self._index_in_epoch = batch_size - rest
            end = self._index_in_epoch
            return (np.concatenate((images_rest, self._images[:end]), axis=0),
                    np.concatenate((labels_rest, self._labels[:end]), axis=0))
        self._index_in_epoch += batch_size
        return (self._images[start:self._index_in_epoch],
                self._labels[start:self._index_in_epoch])


def _local_file(train_dir, name, source_url):
    path = os.path.join(train_dir, name)
    if os.path.exists(path):
        return path
    raw = path[:-3]
    if os.path.exists(raw):
        return raw
    wanted = ", ".join((TRAIN_IMAGES, TRAIN_LABELS, TEST_IMAGES, TEST_LABELS))
    raise FileNotFoundError(
        f"mnist.read_data_sets: {path} not found. tensorflux never downloads data: put "
        f"{wanted} (from {source_url or DEFAULT_SOURCE_URL}) in {train_dir}.")


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=dtypes.float32,
                   reshape=True, validation_size=5000, seed=None,
                   source_url=DEFAULT_SOURCE_URL):
    """Datasets(train, validation, test) from the MNIST idx files in `train_dir`.

    Args:
        train_dir: directory holding the four idx files (`.gz` or uncompressed).
        fake_data: return fake data sets (no files read).
        one_hot: one-hot labels.
        dtype: float32 (scaled to [0, 1]) or uint8 images.
        reshape: flatten images to [n, rows * cols].
        validation_size: the first examples of the training file become the validation set.
        seed: shuffling seed (None: NumPy's global generator).
        source_url: only named in the error when a file is missing.

    Returns:
        base.Datasets.

    Raises:
        FileNotFoundError: a file is missing (the message names the files and their URL).
        ValueError: a bad validation_size or a malformed file.
    """
    if fake_data:
        def fake():
            return DataSet([], [], fake_data=True, one_hot=one_hot, dtype=dtype, seed=seed)

        return Datasets(train=fake(), validation=fake(), test=fake())
    files = [_local_file(train_dir, name, source_url)
             for name in (TRAIN_IMAGES, TRAIN_LABELS, TEST_IMAGES, TEST_LABELS)]
    with open(files[0], "rb") as f:
        train_images = extract_images(f)
    with open(files[1], "rb") as f:
        train_labels = extract_labels(f, one_hot=one_hot)
    with open(files[2], "rb") as f:
        test_images = extract_images(f)
    with open(files[3], "rb") as f:
        test_labels = extract_labels(f, one_hot=one_hot)
    if not 0 <= validation_size <= len(train_images):
        raise ValueError(f"Validation size should be between 0 and {len(train_images)}. "
                         f"Received: {validation_size}.")
    options = dict(dtype=dtype, reshape=reshape, seed=seed)
    return Datasets(
        train=DataSet(train_images[validation_size:], train_labels[validation_size:],
                      **options),
        validation=DataSet(train_images[:validation_size], train_labels[:validation_size],
                           **options),
        test=DataSet(test_images, test_labels, **options))


def load_mnist(train_dir="MNIST-data"):
    """`read_data_sets(train_dir)`."""
    return read_data_sets(train_dir)
