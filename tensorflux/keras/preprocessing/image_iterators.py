"""Batch iterators of `tf.keras.preprocessing.image`: over arrays (`NumpyArrayIterator`), over
a directory of class subdirectories (`DirectoryIterator`) and over a pandas DataFrame of file
names (`DataFrameIterator`). Each is a `tf.keras.utils.Sequence` (indexable, for
`fit_generator`) and a Python iterator (endless, reshuffled each epoch)."""

from __future__ import annotations

import os
import threading
import warnings

import numpy as np

from tensorflux.keras.preprocessing.image_transforms import array_to_img, img_to_array, load_img
from tensorflux.keras.utils import Sequence

__all__ = ["Iterator", "NumpyArrayIterator", "DirectoryIterator", "DataFrameIterator"]

WHITE_LIST_FORMATS = ("png", "jpg", "jpeg", "bmp", "ppm", "tif", "tiff")
_CLASS_MODES = ("categorical", "binary", "sparse", "input", None)


class Iterator(Sequence):
    """Index batches over `n` samples; subclasses build the batch of given sample indices."""

    def __init__(self, n, batch_size, shuffle, seed):
        self.n = n
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle = shuffle
        self.batch_index = 0
        self.total_batches_seen = 0
        self.lock = threading.Lock()
        self.index_array = None
        self.index_generator = self._flow_index()

    def _set_index_array(self):
        self.index_array = np.arange(self.n)
        if self.shuffle:
            self.index_array = np.random.permutation(self.n)

    def __getitem__(self, idx):
        if idx >= len(self):
            raise ValueError(f"Asked to retrieve element {idx}, but the Sequence has length "
                             f"{len(self)}")
        if self.seed is not None:
            np.random.seed(self.seed + self.total_batches_seen)
        self.total_batches_seen += 1
        if self.index_array is None:
            self._set_index_array()
        rows = self.index_array[self.batch_size * idx:self.batch_size * (idx + 1)]
        return self._get_batches_of_transformed_samples(rows)

    def __len__(self):
        return (self.n + self.batch_size - 1) // self.batch_size

    def on_epoch_end(self):
        self._set_index_array()

    def reset(self):
        self.batch_index = 0

    def _flow_index(self):
        self.reset()
        while True:
            if self.seed is not None:
                np.random.seed(self.seed + self.total_batches_seen)
            if self.batch_index == 0:
                self._set_index_array()
            current = 0 if self.n == 0 else (self.batch_index * self.batch_size) % self.n
            if self.n > current + self.batch_size:
                self.batch_index += 1
            else:
                self.batch_index = 0
            self.total_batches_seen += 1
            yield self.index_array[current:current + self.batch_size]

    def __iter__(self):
        return self

    def __next__(self):
        with self.lock:
            rows = next(self.index_generator)
        return self._get_batches_of_transformed_samples(rows)

    next = __next__

    def _get_batches_of_transformed_samples(self, index_array):
        raise NotImplementedError

    def _save(self, batch_x, index_array):
        if not getattr(self, "save_to_dir", None):
            return
        for i, j in enumerate(index_array):
            img = array_to_img(batch_x[i], self.data_format, scale=True)
            name = (f"{self.save_prefix}_{j}_{np.random.randint(1_000_000)}."
                    f"{self.save_format}")
            img.save(os.path.join(self.save_to_dir, name))


def _validation_rows(count, generator, subset):
    """The [start, stop) of `subset` ('training', 'validation', None) of `count` rows."""
    if subset is None:
        return 0, count
    if subset not in ("training", "validation"):
        raise ValueError(f"Invalid subset name: {subset}; expected 'training' or 'validation'")
    split = int(count * generator._validation_split)
    return (0, split) if subset == "validation" else (split, count)


class NumpyArrayIterator(Iterator):
    """Augmented batches of the images `x` (rank 4) with labels `y` and sample weights.

    Raises:
        ValueError: `x` not rank 4, `x` and `y` (or the extra arrays) of different lengths.
    """

    def __init__(self, x, y, image_data_generator, batch_size=32, shuffle=False,
                 sample_weight=None, seed=None, data_format="channels_last", save_to_dir=None,
                 save_prefix="", save_format="png", subset=None, dtype="float32"):
        self.dtype = dtype
        if isinstance(x, (tuple, list)):
            if not isinstance(x[1], list):
                x_misc = [np.asarray(x[1])]
            else:
                x_misc = [np.asarray(xx) for xx in x[1]]
            x = x[0]
            for xx in x_misc:
                if len(x) != len(xx):
                    raise ValueError(f"All of the arrays in `x` should have the same length. "
                                     f"Found a pair with: len(x[0]) = {len(x)}, "
                                     f"len(x[?]) = {len(xx)}")
        else:
            x_misc = []
        if y is not None and len(x) != len(y):
            raise ValueError(f"`x` (images tensor) and `y` (labels) should have the same "
                             f"length. Found: x.shape = {np.asarray(x).shape}, y.shape = "
                             f"{np.asarray(y).shape}")
        if sample_weight is not None and len(x) != len(sample_weight):
            raise ValueError(f"`x` (images tensor) and `sample_weight` should have the same "
                             f"length. Found: x.shape = {np.asarray(x).shape}, "
                             f"sample_weight.shape = {np.asarray(sample_weight).shape}")
        start, stop = _validation_rows(len(x), image_data_generator, subset)
        if subset is not None and y is not None:
            split = int(len(x) * image_data_generator._validation_split)
            if not np.array_equal(np.unique(np.asarray(y)[:split]),
                                  np.unique(np.asarray(y)[split:])):
                raise ValueError("Training and validation subsets have different number of "
                                 "classes after the split. If your numpy arrays are sorted by "
                                 "the label, you might want to shuffle them.")
        x = np.asarray(x)[start:stop]
        x_misc = [xx[start:stop] for xx in x_misc]
        y = np.asarray(y)[start:stop] if y is not None else None
        sample_weight = np.asarray(sample_weight)[start:stop] if sample_weight is not None \
            else None
        self.x = np.asarray(x, dtype=self.dtype)
        self.x_misc = x_misc
        if self.x.ndim != 4:
            raise ValueError(f"Input data in `NumpyArrayIterator` should have rank 4. You "
                             f"passed an array with shape {self.x.shape}")
        channels_axis = 3 if data_format == "channels_last" else 1
        if self.x.shape[channels_axis] not in (1, 3, 4):
            warnings.warn(f"NumpyArrayIterator is set to use the data format convention "
                          f"'{data_format}' (channels on axis {channels_axis}), i.e. expected "
                          f"either 1, 3, or 4 channels on axis {channels_axis}. However, it "
                          f"was passed an array with shape {self.x.shape} "
                          f"({self.x.shape[channels_axis]} channels).", stacklevel=2)
        self.y = y
        self.sample_weight = sample_weight
        self.image_data_generator = image_data_generator
        self.data_format = data_format
        self.save_to_dir, self.save_prefix, self.save_format = save_to_dir, save_prefix, \
            save_format
        super().__init__(self.x.shape[0], batch_size, shuffle, seed)

    def _get_batches_of_transformed_samples(self, index_array):
        batch_x = np.zeros((len(index_array),) + self.x.shape[1:], dtype=self.dtype)
        gen = self.image_data_generator
        for i, j in enumerate(index_array):
            params = gen.get_random_transform(self.x[j].shape)
            x = gen.apply_transform(self.x[j].astype(self.dtype), params)
            batch_x[i] = gen.standardize(x)
        self._save(batch_x, index_array)
        output = (batch_x,) + tuple(xx[index_array] for xx in self.x_misc)
        if self.y is None:
            return output[0] if len(output) == 1 else output
        output += (self.y[index_array],)
        if self.sample_weight is not None:
            output += (self.sample_weight[index_array],)
        return output


class _FileIterator(Iterator):
    """Batches of image files with their class labels (shared by the directory and the
    DataFrame iterators)."""

    def _setup(self, image_data_generator, target_size, color_mode, class_mode, data_format,
               save_to_dir, save_prefix, save_format, interpolation, dtype):
        if color_mode not in ("rgb", "rgba", "grayscale"):
            raise ValueError(f"Invalid color mode: {color_mode}; expected \"rgb\", \"rgba\", "
                             f"or \"grayscale\".")
        if class_mode not in self._class_modes():
            raise ValueError(f"Invalid class_mode: {class_mode}; expected one of "
                             f"{self._class_modes()}")
        self.image_data_generator = image_data_generator
        self.target_size = tuple(target_size)
        self.color_mode = color_mode
        self.class_mode = class_mode
        self.data_format = data_format
        self.interpolation = interpolation
        self.dtype = dtype
        channels = {"rgba": 4, "rgb": 3, "grayscale": 1}[color_mode]
        self.image_shape = (self.target_size + (channels,) if data_format == "channels_last"
                            else (channels,) + self.target_size)
        self.save_to_dir, self.save_prefix, self.save_format = save_to_dir, save_prefix, \
            save_format

    @staticmethod
    def _class_modes():
        return _CLASS_MODES

    def _labels(self, index_array, batch_x):
        if self.class_mode == "input":
            return batch_x.copy()
        if self.class_mode == "sparse":
            return self.classes[index_array]
        if self.class_mode == "binary":
            return self.classes[index_array].astype(self.dtype)
        if self.class_mode == "categorical":
            out = np.zeros((len(index_array), len(self.class_indices)), dtype=self.dtype)
            for i, label in enumerate(self.classes[index_array]):
                out[i, label] = 1.0
            return out
        return None

    def _get_batches_of_transformed_samples(self, index_array):
        batch_x = np.zeros((len(index_array),) + self.image_shape, dtype=self.dtype)
        gen = self.image_data_generator
        for i, j in enumerate(index_array):
            img = load_img(self.filepaths[j], color_mode=self.color_mode,
                           target_size=self.target_size, interpolation=self.interpolation)
            x = img_to_array(img, data_format=self.data_format)
            if hasattr(img, "close"):
                img.close()
            params = gen.get_random_transform(x.shape)
            x = gen.apply_transform(x, params)
            batch_x[i] = gen.standardize(x)
        self._save(batch_x, index_array)
        labels = self._labels(index_array, batch_x)
        return batch_x if labels is None else (batch_x, labels)


class DirectoryIterator(_FileIterator):
    """Batches of the images under `directory/<class>/` (classes: sorted subdirectories)."""

    def __init__(self, directory, image_data_generator, target_size=(256, 256),
                 color_mode="rgb", classes=None, class_mode="categorical", batch_size=32,
                 shuffle=True, seed=None, data_format="channels_last", save_to_dir=None,
                 save_prefix="", save_format="png", follow_links=False, subset=None,
                 interpolation="nearest", dtype="float32"):
        self._setup(image_data_generator, target_size, color_mode, class_mode, data_format,
                    save_to_dir, save_prefix, save_format, interpolation, dtype)
        self.directory = directory
        if not classes:
            classes = sorted(d for d in os.listdir(directory)
                             if os.path.isdir(os.path.join(directory, d)))
        self.class_indices = dict(zip(classes, range(len(classes))))
        self.num_classes = len(classes)
        filenames, labels = [], []
        for label, name in enumerate(classes):
            root = os.path.join(directory, name)
            found = []
            for base, _, files in os.walk(root, followlinks=follow_links):
                for fname in sorted(files):
                    if fname.lower().endswith(tuple("." + ext for ext in WHITE_LIST_FORMATS)):
                        found.append(os.path.relpath(os.path.join(base, fname), directory))
            found.sort()
            start, stop = _validation_rows(len(found), image_data_generator, subset)
            filenames += found[start:stop]
            labels += [label] * (stop - start)
        self.filenames = filenames
        self.classes = np.array(labels, dtype="int32")
        self.samples = len(filenames)
        self.filepaths = [os.path.join(directory, f) for f in filenames]
        print(f"Found {self.samples} images belonging to {self.num_classes} classes.")
        super().__init__(self.samples, batch_size, shuffle, seed)

    @property
    def labels(self):
        return self.classes


class DataFrameIterator(_FileIterator):
    """Batches of the images named in `dataframe[x_col]` with labels from `dataframe[y_col]`
    ('categorical'/'binary'/'sparse' class names, 'raw' values, 'input', None)."""

    def __init__(self, dataframe, directory=None, image_data_generator=None, x_col="filename",
                 y_col="class", weight_col=None, target_size=(256, 256), color_mode="rgb",
                 classes=None, class_mode="categorical", batch_size=32, shuffle=True,
                 seed=None, data_format="channels_last", save_to_dir=None, save_prefix="",
                 save_format="png", subset=None, interpolation="nearest", dtype="float32",
                 validate_filenames=True):
        self._setup(image_data_generator, target_size, color_mode, class_mode, data_format,
                    save_to_dir, save_prefix, save_format, interpolation, dtype)
        names = [str(v) for v in dataframe[x_col]]
        raw = list(dataframe[y_col]) if class_mode not in ("input", None) else []
        weights = list(dataframe[weight_col]) if weight_col else None
        paths = [os.path.join(directory, n) if directory else n for n in names]
        keep = [i for i, p in enumerate(paths)
                if not validate_filenames or (os.path.isfile(p) and p.lower().endswith(
                    tuple("." + ext for ext in WHITE_LIST_FORMATS)))]
        start, stop = _validation_rows(len(keep), image_data_generator, subset)
        keep = keep[start:stop]
        self.filenames = [names[i] for i in keep]
        self.filepaths = [paths[i] for i in keep]
        self.samples = len(keep)
        self._weights = None if weights is None else np.array([weights[i] for i in keep])
        if class_mode == "raw":
            self.classes = np.array([raw[i] for i in keep])
            self.class_indices = {}
        elif class_mode in ("input", None):
            self.classes = np.zeros(len(keep), "int32")
            self.class_indices = {}
        else:
            classes = classes or sorted({str(raw[i]) for i in keep})
            self.class_indices = dict(zip(classes, range(len(classes))))
            self.classes = np.array([self.class_indices[str(raw[i])] for i in keep], "int32")
        self.num_classes = len(self.class_indices)
        print(f"Found {self.samples} validated image filenames belonging to "
              f"{self.num_classes} classes.")
        super().__init__(self.samples, batch_size, shuffle, seed)

    @staticmethod
    def _class_modes():
        return _CLASS_MODES + ("raw",)

    def _labels(self, index_array, batch_x):
        if self.class_mode == "raw":
            return self.classes[index_array]
        return super()._labels(index_array, batch_x)

    def _get_batches_of_transformed_samples(self, index_array):
        out = super()._get_batches_of_transformed_samples(index_array)
        if self._weights is None or not isinstance(out, tuple):
            return out
        return out + (self._weights[index_array],)
