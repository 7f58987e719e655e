"""tf.keras.utils.get_file and tf.keras.datasets: files fetched once into the Keras cache
(file:// origins stand in for the network), hashes checked, archives unpacked."""

import gzip
import hashlib
import io
import os
import tarfile
import zipfile

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.keras.datasets import boston_housing, mnist


def _md5(path):
    return hashlib.md5(path.read_bytes()).hexdigest()


def _sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def origin(tmp_path):
    src = tmp_path / "origin"
    src.mkdir()
    return src


def test_get_file_fetches_once_then_reuses_the_cache(tmp_path, origin):
    (origin / "a.txt").write_bytes(b"first")
    cache = tmp_path / "cache"
    path = tf.keras.utils.get_file("a.txt", (origin / "a.txt").as_uri(), cache_dir=str(cache))
    assert path == os.path.join(str(cache), "datasets", "a.txt")
    assert open(path, "rb").read() == b"first"
    # The cached copy is kept even though the origin changed (no hash given).
    (origin / "a.txt").write_bytes(b"second")
    again = tf.keras.utils.get_file("a.txt", (origin / "a.txt").as_uri(), cache_dir=str(cache))
    assert open(again, "rb").read() == b"first"


def test_get_file_refetches_when_the_cached_hash_differs(tmp_path, origin, capsys):
    (origin / "b.bin").write_bytes(b"fresh contents")
    cache = tmp_path / "cache"
    (cache / "data").mkdir(parents=True)
    (cache / "data" / "b.bin").write_bytes(b"stale")
    for digest in (_md5(origin / "b.bin"), _sha256(origin / "b.bin")):
        (cache / "data" / "b.bin").write_bytes(b"stale")
        path = tf.keras.utils.get_file("b.bin", (origin / "b.bin").as_uri(), file_hash=digest,
                                       cache_subdir="data", cache_dir=str(cache))
        assert open(path, "rb").read() == b"fresh contents"
    assert "does not match the original value" in capsys.readouterr().out


def test_get_file_rejects_a_fetched_file_with_the_wrong_hash(tmp_path, origin):
    (origin / "c.bin").write_bytes(b"abc")
    cache = tmp_path / "cache"
    with pytest.raises(ValueError, match="does not match the expected md5"):
        tf.keras.utils.get_file("c.bin", (origin / "c.bin").as_uri(), md5_hash="0" * 32,
                                cache_dir=str(cache))
    with pytest.raises(ValueError, match="hash_algorithm"):
        tf.keras.utils.get_file("c.bin", (origin / "c.bin").as_uri(), file_hash="00",
                                hash_algorithm="crc32", cache_dir=str(cache))


def test_get_file_fetch_failure_names_the_url_and_leaves_no_file(tmp_path):
    url = (tmp_path / "missing.txt").as_uri()
    with pytest.raises(Exception, match="URL fetch failure on " + url):
        tf.keras.utils.get_file("m.txt", url, cache_dir=str(tmp_path / "cache"))
    assert not (tmp_path / "cache" / "datasets" / "m.txt").exists()


def test_get_file_unpacks_tar_and_zip_archives(tmp_path, origin):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as archive:
        info = tarfile.TarInfo("pkg/x.txt")
        info.size = 5
        archive.addfile(info, io.BytesIO(b"hello"))
    (origin / "pkg.tar.gz").write_bytes(buf.getvalue())
    cache = tmp_path / "cache"
    path = tf.keras.utils.get_file("pkg", (origin / "pkg.tar.gz").as_uri(), untar=True,
                                   cache_dir=str(cache))
    assert path == os.path.join(str(cache), "datasets", "pkg")
    assert open(os.path.join(path, "x.txt"), "rb").read() == b"hello"
    with zipfile.ZipFile(origin / "z.zip", "w") as archive:
        archive.writestr("inner/y.txt", "zipped")
    zpath = tf.keras.utils.get_file("z.zip", (origin / "z.zip").as_uri(), extract=True,
                                    cache_dir=str(cache))
    assert zpath.endswith("z.zip")
    assert open(os.path.join(str(cache), "datasets", "inner", "y.txt")).read() == "zipped"


def test_mnist_load_data_reads_the_npz(tmp_path, origin, monkeypatch):
    rng = np.random.RandomState(0)
    arrays = {"x_train": rng.randint(0, 256, (6, 28, 28)).astype(np.uint8),
              "y_train": rng.randint(0, 10, 6).astype(np.uint8),
              "x_test": rng.randint(0, 256, (2, 28, 28)).astype(np.uint8),
              "y_test": rng.randint(0, 10, 2).astype(np.uint8)}
    np.savez(origin / "mnist.npz", **arrays)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(mnist, "_ORIGIN", (origin / "mnist.npz").as_uri())
    monkeypatch.setattr(mnist, "_MD5", _md5(origin / "mnist.npz"))
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
    for got, key in ((x_train, "x_train"), (y_train, "y_train"), (x_test, "x_test"),
                     (y_test, "y_test")):
        np.testing.assert_array_equal(got, arrays[key])
        assert got.dtype == np.uint8
    assert (tmp_path / "home" / ".keras" / "datasets" / "mnist.npz").exists()


def test_fashion_mnist_reads_cached_idx_files(tmp_path, monkeypatch):
    rng = np.random.RandomState(1)
    xs = {"train": rng.randint(0, 256, (5, 28, 28)).astype(np.uint8),
          "t10k": rng.randint(0, 256, (3, 28, 28)).astype(np.uint8)}
    ys = {"train": rng.randint(0, 10, 5).astype(np.uint8),
          "t10k": rng.randint(0, 10, 3).astype(np.uint8)}
    cache = tmp_path / "home" / ".keras" / "datasets" / "fashion-mnist"
    cache.mkdir(parents=True)
    for split in ("train", "t10k"):
        with gzip.open(cache / f"{split}-labels-idx1-ubyte.gz", "wb") as f:
            f.write(b"\0" * 8 + ys[split].tobytes())
        with gzip.open(cache / f"{split}-images-idx3-ubyte.gz", "wb") as f:
            f.write(b"\0" * 16 + xs[split].tobytes())
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.fashion_mnist.load_data()
    np.testing.assert_array_equal(x_train, xs["train"])
    np.testing.assert_array_equal(y_train, ys["train"])
    np.testing.assert_array_equal(x_test, xs["t10k"])
    np.testing.assert_array_equal(y_test, ys["t10k"])


def test_boston_housing_split_follows_the_seeded_shuffle(tmp_path, origin, monkeypatch):
    x = np.arange(30, dtype=np.float64).reshape(10, 3)
    y = np.arange(10, dtype=np.float64) * 1.5
    np.savez(origin / "boston_housing.npz", x=x, y=y)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(boston_housing, "_ORIGIN", (origin / "boston_housing.npz").as_uri())
    monkeypatch.setattr(boston_housing, "_SHA256", _sha256(origin / "boston_housing.npz"))
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.boston_housing.load_data(
        test_split=0.3, seed=7)
    order = np.arange(10)
    np.random.RandomState(7).shuffle(order)
    np.testing.assert_array_equal(x_train, x[order[:7]])
    np.testing.assert_array_equal(y_test, y[order[7:]])
    assert x_test.shape == (3, 3) and y_train.shape == (7,)
    with pytest.raises(ValueError, match="test_split"):
        tf.keras.datasets.boston_housing.load_data(test_split=1.0)


def test_pickled_keras_datasets_are_refused_by_name():
    with pytest.raises(AttributeError, match="pickle"):
        tf.keras.datasets.cifar10  # noqa: B018
