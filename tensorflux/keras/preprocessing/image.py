"""`tf.keras.preprocessing.image`: `ImageDataGenerator` (random augmentation, feature-wise
normalisation, ZCA whitening) and its iterators, with the image helpers of
image_transforms.py (keras-preprocessing 1.1 behaviour, as TF 1.x shipped)."""

from __future__ import annotations

import warnings

import numpy as np

from tensorflux.keras.preprocessing.image_iterators import (
    DataFrameIterator,
    DirectoryIterator,
    Iterator,
    NumpyArrayIterator,
)
from tensorflux.keras.preprocessing.image_transforms import (
    _data_format,
    apply_affine_transform,
    apply_brightness_shift,
    apply_channel_shift,
    array_to_img,
    flip_axis,
    img_to_array,
    load_img,
    random_brightness,
    random_channel_shift,
    random_rotation,
    random_shear,
    random_shift,
    random_zoom,
    save_img,
)

__all__ = ["ImageDataGenerator", "Iterator", "NumpyArrayIterator", "DirectoryIterator",
           "DataFrameIterator", "apply_affine_transform", "apply_brightness_shift",
           "apply_channel_shift", "array_to_img", "img_to_array", "load_img", "save_img",
           "random_brightness", "random_channel_shift", "random_rotation", "random_shear",
           "random_shift", "random_zoom"]


def _shift_amount(shift_range, size):
    """A random shift: from the list of allowed values (random sign), an int range of pixels
    (`np.random.choice`, as Keras), or a uniform fraction (< 1: of `size`)."""
    if not shift_range:
        return 0
    try:
        amount = np.random.choice(shift_range)
        amount *= np.random.choice([-1, 1])
    except ValueError:
        amount = np.random.uniform(-shift_range, shift_range)
    if np.max(shift_range) < 1:
        amount *= size
    return amount


class ImageDataGenerator:
    """Batches of image data with real-time augmentation.

    Arguments as TF 1.x's: feature-/sample-wise centring and std normalisation, ZCA whitening,
    rotation/shift/shear/zoom ranges, brightness and channel shifts, flips, `fill_mode` and
    `cval`, `rescale`, a `preprocessing_function`, `data_format`, `validation_split`,
    `interpolation_order`, `dtype`.

    Raises:
        ValueError: a bad data format, `validation_split` outside [0, 1), or a bad zoom range.
    """

    def __init__(self, featurewise_center=False, samplewise_center=False,
                 featurewise_std_normalization=False, samplewise_std_normalization=False,
                 zca_whitening=False, zca_epsilon=1e-6, rotation_range=0, width_shift_range=0.0,
                 height_shift_range=0.0, brightness_range=None, shear_range=0.0, zoom_range=0.0,
                 channel_shift_range=0.0, fill_mode="nearest", cval=0.0, horizontal_flip=False,
                 vertical_flip=False, rescale=None, preprocessing_function=None,
                 data_format=None, validation_split=0.0, interpolation_order=1,
                 dtype="float32"):
        self.featurewise_center = featurewise_center
        self.samplewise_center = samplewise_center
        self.featurewise_std_normalization = featurewise_std_normalization
        self.samplewise_std_normalization = samplewise_std_normalization
        self.zca_whitening = zca_whitening
        self.zca_epsilon = zca_epsilon
        self.rotation_range = rotation_range
        self.width_shift_range = width_shift_range
        self.height_shift_range = height_shift_range
        self.shear_range = shear_range
        self.channel_shift_range = channel_shift_range
        self.fill_mode = fill_mode
        self.cval = cval
        self.horizontal_flip = horizontal_flip
        self.vertical_flip = vertical_flip
        self.rescale = rescale
        self.preprocessing_function = preprocessing_function
        self.interpolation_order = interpolation_order
        self.dtype = dtype
        self.data_format = _data_format(data_format)
        if self.data_format == "channels_first":
            self.channel_axis, self.row_axis, self.col_axis = 1, 2, 3
        else:
            self.channel_axis, self.row_axis, self.col_axis = 3, 1, 2
        if validation_split and not 0 < validation_split < 1:
            raise ValueError(f"`validation_split` must be strictly between 0 and 1.  Received: "
                             f"{validation_split}")
        self._validation_split = validation_split
        self.mean = self.std = self.principal_components = None
        if np.isscalar(zoom_range):
            self.zoom_range = [1 - zoom_range, 1 + zoom_range]
        elif len(zoom_range) == 2:
            self.zoom_range = [zoom_range[0], zoom_range[1]]
        else:
            raise ValueError(f"`zoom_range` should be a float or a tuple or list of two "
                             f"floats. Received: {zoom_range}")
        if brightness_range is not None and (np.isscalar(brightness_range)
                                             or len(brightness_range) != 2):
            raise ValueError(f"`brightness_range should be tuple or list of two floats. "
                             f"Received: {brightness_range}")
        self.brightness_range = brightness_range
        if zca_whitening and not featurewise_center:
            self.featurewise_center = True
            warnings.warn("This ImageDataGenerator specifies `zca_whitening`, which overrides "
                          "setting of `featurewise_center`.", stacklevel=2)
        if zca_whitening and featurewise_std_normalization:
            self.featurewise_std_normalization = False
            warnings.warn("This ImageDataGenerator specifies `zca_whitening` which overrides "
                          "setting of`featurewise_std_normalization`.", stacklevel=2)

    # -- iterators -----------------------------------------------------------------------------

    def flow(self, x, y=None, batch_size=32, shuffle=True, sample_weight=None, seed=None,
             save_to_dir=None, save_prefix="", save_format="png", subset=None):
        """Augmented batches of the arrays `x` (rank 4) and `y`."""
        return NumpyArrayIterator(x, y, self, batch_size=batch_size, shuffle=shuffle,
                                  sample_weight=sample_weight, seed=seed,
                                  data_format=self.data_format, save_to_dir=save_to_dir,
                                  save_prefix=save_prefix, save_format=save_format,
                                  subset=subset, dtype=self.dtype)

    def flow_from_directory(self, directory, target_size=(256, 256), color_mode="rgb",
                            classes=None, class_mode="categorical", batch_size=32, shuffle=True,
                            seed=None, save_to_dir=None, save_prefix="", save_format="png",
                            follow_links=False, subset=None, interpolation="nearest"):
        """Augmented batches of the images in `directory`'s class subdirectories."""
        return DirectoryIterator(directory, self, target_size=target_size,
                                 color_mode=color_mode, classes=classes, class_mode=class_mode,
                                 batch_size=batch_size, shuffle=shuffle, seed=seed,
                                 data_format=self.data_format, save_to_dir=save_to_dir,
                                 save_prefix=save_prefix, save_format=save_format,
                                 follow_links=follow_links, subset=subset,
                                 interpolation=interpolation, dtype=self.dtype)

    def flow_from_dataframe(self, dataframe, directory=None, x_col="filename", y_col="class",
                            weight_col=None, target_size=(256, 256), color_mode="rgb",
                            classes=None, class_mode="categorical", batch_size=32,
                            shuffle=True, seed=None, save_to_dir=None, save_prefix="",
                            save_format="png", subset=None, interpolation="nearest",
                            validate_filenames=True, **kwargs):
        """Augmented batches of the image files a DataFrame lists."""
        kwargs.pop("drop_duplicates", None)
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {sorted(kwargs)}")
        return DataFrameIterator(dataframe, directory, self, x_col=x_col, y_col=y_col,
                                 weight_col=weight_col, target_size=target_size,
                                 color_mode=color_mode, classes=classes, class_mode=class_mode,
                                 batch_size=batch_size, shuffle=shuffle, seed=seed,
                                 data_format=self.data_format, save_to_dir=save_to_dir,
                                 save_prefix=save_prefix, save_format=save_format,
                                 subset=subset, interpolation=interpolation, dtype=self.dtype,
                                 validate_filenames=validate_filenames)

    # -- normalisation ---------------------------------------------------------------------------

    def standardize(self, x):
        """`x` (one image or a batch) after the preprocessing function, `rescale` and the
        sample-/feature-wise normalisations (in place where NumPy allows, as Keras)."""
        if self.preprocessing_function:
            x = self.preprocessing_function(x)
        if self.rescale:
            x *= self.rescale
        if self.samplewise_center:
            x -= np.mean(x, keepdims=True)
        if self.samplewise_std_normalization:
            x /= np.std(x, keepdims=True) + 1e-6
        if self.featurewise_center:
            if self.mean is not None:
                x -= self.mean
            else:
                warnings.warn("This ImageDataGenerator specifies `featurewise_center`, but it "
                              "hasn't been fit on any training data. Fit it first by calling "
                              "`.fit(numpy_data)`.", stacklevel=2)
        if self.featurewise_std_normalization:
            if self.std is not None:
                x /= self.std + 1e-6
            else:
                warnings.warn("This ImageDataGenerator specifies "
                              "`featurewise_std_normalization`, but it hasn't been fit on any "
                              "training data. Fit it first by calling `.fit(numpy_data)`.",
                              stacklevel=2)
        if self.zca_whitening:
            if self.principal_components is not None:
                flat = np.reshape(x, (-1, int(np.prod(x.shape[-3:]))))
                x = np.reshape(flat @ self.principal_components, x.shape)
            else:
                warnings.warn("This ImageDataGenerator specifies `zca_whitening`, but it hasn't "
                              "been fit on any training data. Fit it first by calling "
                              "`.fit(numpy_data)`.", stacklevel=2)
        return x

    def fit(self, x, augment=False, rounds=1, seed=None):
        """Computes the feature-wise mean, std and ZCA matrix of the images `x` (rank 4).

        Raises:
            ValueError: `x` is not rank 4.
        """
        x = np.asarray(x, dtype=self.dtype)
        if x.ndim != 4:
            raise ValueError(f"Input to `.fit()` should have rank 4. Got array with shape: "
                             f"{x.shape}")
        if x.shape[self.channel_axis] not in (1, 3, 4):
            warnings.warn(f"Expected input to be images (as Numpy array) following the data "
                          f"format convention \"{self.data_format}\" (channels on axis "
                          f"{self.channel_axis}), i.e. expected either 1, 3 or 4 channels on "
                          f"axis {self.channel_axis}. However, it was passed an array with "
                          f"shape {x.shape} ({x.shape[self.channel_axis]} channels).",
                          stacklevel=2)
        if seed is not None:
            np.random.seed(seed)
        x = np.copy(x)
        if augment:
            augmented = np.zeros((rounds * x.shape[0],) + x.shape[1:], dtype=self.dtype)
            for r in range(rounds):
                for i in range(x.shape[0]):
                    augmented[i + r * x.shape[0]] = self.random_transform(x[i])
            x = augmented
        broadcast = [1, 1, 1]
        broadcast[self.channel_axis - 1] = x.shape[self.channel_axis]
        axes = (0, self.row_axis, self.col_axis)
        if self.featurewise_center:
            self.mean = np.reshape(np.mean(x, axis=axes), broadcast)
            x -= self.mean
        if self.featurewise_std_normalization:
            self.std = np.reshape(np.std(x, axis=axes), broadcast)
            x /= self.std + 1e-6
        if self.zca_whitening:
            flat = np.reshape(x, (x.shape[0], -1))
            sigma = flat.T @ flat / flat.shape[0]
            u, s, _ = np.linalg.svd(sigma)
            s_inv = 1.0 / np.sqrt(s[np.newaxis] + self.zca_epsilon)
            self.principal_components = (u * s_inv) @ u.T

    # -- augmentation ----------------------------------------------------------------------------

    def get_random_transform(self, img_shape, seed=None):
        """Random parameters of one transform (a dict `apply_transform` takes)."""
        row, col = self.row_axis - 1, self.col_axis - 1
        if seed is not None:
            np.random.seed(seed)
        theta = np.random.uniform(-self.rotation_range, self.rotation_range) \
            if self.rotation_range else 0
        tx = _shift_amount(self.height_shift_range, img_shape[row])
        ty = _shift_amount(self.width_shift_range, img_shape[col])
        shear = np.random.uniform(-self.shear_range, self.shear_range) if self.shear_range \
            else 0
        if self.zoom_range[0] == 1 and self.zoom_range[1] == 1:
            zx, zy = 1, 1
        else:
            zx, zy = np.random.uniform(self.zoom_range[0], self.zoom_range[1], 2)
        flip_horizontal = (np.random.random() < 0.5) * self.horizontal_flip
        flip_vertical = (np.random.random() < 0.5) * self.vertical_flip
        channel_shift = None
        if self.channel_shift_range != 0:
            channel_shift = np.random.uniform(-self.channel_shift_range,
                                              self.channel_shift_range)
        brightness = None
        if self.brightness_range is not None:
            brightness = np.random.uniform(self.brightness_range[0], self.brightness_range[1])
        return {"theta": theta, "tx": tx, "ty": ty, "shear": shear, "zx": zx, "zy": zy,
                "flip_horizontal": flip_horizontal, "flip_vertical": flip_vertical,
                "channel_shift_intensity": channel_shift, "brightness": brightness}

    def apply_transform(self, x, transform_parameters):
        """`x` (one 3-D image) transformed by the given parameters."""
        row, col, channel = self.row_axis - 1, self.col_axis - 1, self.channel_axis - 1
        p = transform_parameters
        x = apply_affine_transform(x, p.get("theta", 0), p.get("tx", 0), p.get("ty", 0),
                                   p.get("shear", 0), p.get("zx", 1), p.get("zy", 1),
                                   row_axis=row, col_axis=col, channel_axis=channel,
                                   fill_mode=self.fill_mode, cval=self.cval,
                                   order=self.interpolation_order)
        if p.get("channel_shift_intensity") is not None:
            x = apply_channel_shift(x, p["channel_shift_intensity"], channel)
        if p.get("flip_horizontal", False):
            x = flip_axis(x, col)
        if p.get("flip_vertical", False):
            x = flip_axis(x, row)
        if p.get("brightness") is not None:
            x = apply_brightness_shift(x, p["brightness"])
        return x

    def random_transform(self, x, seed=None):
        """`x` (one 3-D image) with a random transform applied."""
        return self.apply_transform(x, self.get_random_transform(x.shape, seed))
