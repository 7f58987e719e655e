"""tf.keras.preprocessing.image: affine transforms (NumPy path against SciPy's ndimage, and
known results), ImageDataGenerator statistics and iterators, files through PIL."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.keras.preprocessing import image_transforms

image = tf.keras.preprocessing.image


def test_known_transforms_of_a_small_image():
    x = np.arange(9.0).reshape(3, 3, 1)
    # tx shifts rows (TF 1.x's keras-preprocessing convention); the centre is (h/2+.5, w/2+.5)
    np.testing.assert_array_equal(image.apply_affine_transform(x, tx=1)[..., 0],
                                  [[3, 4, 5], [6, 7, 8], [6, 7, 8]])
    np.testing.assert_array_equal(image.apply_affine_transform(x, ty=-1, fill_mode="constant",
                                                               cval=-1)[..., 0],
                                  [[-1, 0, 1], [-1, 3, 4], [-1, 6, 7]])
    np.testing.assert_array_equal(image.apply_affine_transform(x)[..., 0], x[..., 0])
    np.testing.assert_array_equal(image_transforms.flip_axis(x, 1)[..., 0], x[:, ::-1, 0])
    shifted = image.apply_channel_shift(np.stack([x[..., 0], x[..., 0] * 2], -1), 5, 2)
    np.testing.assert_array_equal(shifted[..., 0], np.clip(x[..., 0] + 5, 0, 16))
    with pytest.raises(ValueError, match="fill_mode"):
        image.apply_affine_transform(x, theta=3, fill_mode="mirror")


@settings(max_examples=20, deadline=None)
@given(rows=st.integers(1, 8), cols=st.integers(1, 8), order=st.sampled_from([0, 1]),
       mode=st.sampled_from(["nearest", "constant", "reflect", "wrap"]),
       theta=st.floats(-180, 180), tx=st.floats(-5, 5), ty=st.floats(-5, 5),
       shear=st.floats(-30, 30), zx=st.floats(0.5, 2), zy=st.floats(0.5, 2),
       seed=st.integers(0, 1000))
def test_numpy_affine_path_equals_scipy(rows, cols, order, mode, theta, tx, ty, shear, zx,
                                        zy, seed):
    ndimage = pytest.importorskip("scipy.ndimage")
    img = np.random.RandomState(seed).rand(rows, cols)
    matrix = np.eye(3)
    t, s = np.deg2rad(theta), np.deg2rad(shear)
    matrix = matrix @ np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0],
                                [0, 0, 1]])
    matrix = matrix @ np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]])
    matrix = matrix @ np.array([[1, -np.sin(s), 0], [0, np.cos(s), 0], [0, 0, 1]])
    matrix = image_transforms.transform_matrix_offset_center(matrix @ np.diag([zx, zy, 1]),
                                                             rows, cols)
    want = ndimage.affine_transform(img, matrix[:2, :2], matrix[:2, 2], order=order,
                                    mode=mode, cval=2.5)
    got = image_transforms._affine_numpy(img, matrix[:2, :2], matrix[:2, 2], order, mode, 2.5)
    np.testing.assert_allclose(got, want, atol=1e-7)


def test_fit_statistics_and_standardize():
    rng = np.random.RandomState(0)
    x = rng.rand(8, 4, 5, 3).astype(np.float32) * 10
    gen = image.ImageDataGenerator(featurewise_center=True, featurewise_std_normalization=True,
                                   rescale=2.0)
    gen.fit(x)
    np.testing.assert_allclose(gen.mean.ravel(), x.mean(axis=(0, 1, 2)), rtol=1e-5)
    centred = x - x.mean(axis=(0, 1, 2))
    np.testing.assert_allclose(gen.std.ravel(), centred.std(axis=(0, 1, 2)), rtol=1e-5)
    one = x[0].copy()
    want = (x[0] * 2.0 - gen.mean) / (gen.std + 1e-6)   # rescale first, statistics of fit
    np.testing.assert_allclose(gen.standardize(one), want, rtol=1e-5)
    with pytest.warns(UserWarning, match="overrides"):
        zca = image.ImageDataGenerator(zca_whitening=True, zca_epsilon=1e-2)
    small = rng.rand(50, 2, 2, 1)
    zca.fit(small)
    flat = (small - small.mean(axis=(0, 1, 2))).reshape(50, -1)
    white = flat @ zca.principal_components
    cov = white.T @ white / 50
    np.testing.assert_allclose(cov, np.eye(4), atol=0.2)   # decorrelated, ~unit variance


def test_flow_batches_labels_weights_and_seeds():
    x = np.random.RandomState(1).rand(10, 6, 6, 3).astype(np.float32)
    y = np.arange(10) % 2
    w = np.arange(10) / 10.0   # identifies the rows of a batch
    gen = image.ImageDataGenerator(horizontal_flip=True, rotation_range=20,
                                   validation_split=0.2)
    it = gen.flow(x, y, batch_size=3, sample_weight=w, seed=4, shuffle=True, subset="training")
    assert len(it) == 3 and it.n == 8
    bx, by, bw = it[0]
    rows = np.round(bw * 10).astype(int)
    assert bx.shape == (3, 6, 6, 3) and all(rows >= 2)   # validation rows are the first 2
    np.testing.assert_array_equal(by, y[rows])
    again = gen.flow(x, y, batch_size=3, sample_weight=w, seed=4, shuffle=True,
                     subset="training")
    np.testing.assert_array_equal(again[0][0], bx)   # the seed fixes order and transforms
    val = gen.flow(x, y, batch_size=5, shuffle=False, subset="validation")
    np.testing.assert_array_equal(next(val)[1], [0, 1])
    with pytest.raises(ValueError, match="different number of classes"):
        gen.flow(x, np.arange(10), subset="training")
    plain = image.ImageDataGenerator().flow(x, batch_size=4, shuffle=False)
    np.testing.assert_array_equal(next(plain), x[:4])
    with pytest.raises(ValueError, match="same length"):
        gen.flow(x, y[:5])
    with pytest.raises(ValueError, match="rank 4"):
        image.ImageDataGenerator().flow(x[0])
    with pytest.raises(ValueError, match="validation_split"):
        image.ImageDataGenerator(validation_split=1.5)
    with pytest.raises(ValueError, match="zoom_range"):
        image.ImageDataGenerator(zoom_range=[1, 2, 3])


def test_fit_generator_trains_on_augmented_batches():
    rng = np.random.RandomState(2)
    x = rng.rand(32, 8, 8, 1).astype(np.float32)
    y = (x.mean(axis=(1, 2, 3)) > 0.5).astype(np.float32)
    gen = image.ImageDataGenerator(width_shift_range=0.1, horizontal_flip=True)
    with tf.Graph().as_default():
        model = tf.keras.Sequential([tf.keras.layers.Flatten(input_shape=(8, 8, 1)),
                                     tf.keras.layers.Dense(1, activation="sigmoid")])
        model.compile("adam", "binary_crossentropy")
        history = model.fit_generator(gen.flow(x, y, batch_size=8, seed=1), steps_per_epoch=4,
                                      epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2


def test_directory_iterator_and_image_files(tmp_path):
    pytest.importorskip("PIL")
    rng = np.random.RandomState(3)
    for label in ("cats", "dogs"):
        (tmp_path / label).mkdir()
        for i in range(3):
            image.save_img(str(tmp_path / label / f"{i}.png"),
                           rng.randint(0, 255, (5, 7, 3)).astype(np.float32), scale=False)
    (tmp_path / "dogs" / "notes.txt").write_text("not an image")
    it = image.ImageDataGenerator(rescale=1 / 255.0).flow_from_directory(
        str(tmp_path), target_size=(5, 7), batch_size=4, shuffle=False)
    assert it.class_indices == {"cats": 0, "dogs": 1} and it.samples == 6
    bx, by = it[0]
    assert bx.shape == (4, 5, 7, 3) and bx.max() <= 1.0
    np.testing.assert_array_equal(by.argmax(1), [0, 0, 0, 1])
    loaded = image.img_to_array(image.load_img(str(tmp_path / "cats" / "0.png")))
    np.testing.assert_allclose(bx[0], loaded / 255.0, rtol=1e-6)
    gray = image.load_img(str(tmp_path / "cats" / "0.png"), color_mode="grayscale",
                          target_size=(2, 3))
    assert image.img_to_array(gray).shape == (2, 3, 1)
    assert image.img_to_array(gray, data_format="channels_first").shape == (1, 2, 3)
    with pytest.raises(ValueError, match="class_mode"):
        image.ImageDataGenerator().flow_from_directory(str(tmp_path), class_mode="multi")
