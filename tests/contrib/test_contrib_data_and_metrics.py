"""tf.contrib.metrics vs NumPy; learn.datasets.mnist over tiny idx files; the projector."""

import gzip
import os

import numpy as np
import pytest

import tensorflux as tf

metrics = tf.contrib.metrics
mnist = tf.contrib.learn.datasets.mnist
RNG = np.random.RandomState(11)


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_streaming_metrics_match_numpy_over_batches():
    pred = tf.placeholder(tf.float32, [None])
    label = tf.placeholder(tf.float32, [None])
    pred_cls = tf.cast(pred > 0.5, tf.int64)
    label_cls = tf.cast(label > 0.5, tf.int64)
    values, updates = metrics.aggregate_metric_map({
        "accuracy": metrics.streaming_accuracy(pred_cls, label_cls),
        "precision": metrics.streaming_precision(pred_cls, label_cls),
        "recall": metrics.streaming_recall(pred_cls, label_cls),
        "mse": metrics.streaming_mean_squared_error(pred, label),
        "mae": metrics.streaming_mean_absolute_error(pred, label),
        "rmse": metrics.streaming_root_mean_squared_error(pred, label),
        "mean": metrics.streaming_mean(pred),
        "pearson": metrics.streaming_pearson_correlation(pred, label),
        "iou": metrics.streaming_mean_iou(pred_cls, label_cls, 2),
        "auc": metrics.streaming_auc(pred, label_cls),
    })
    ps, ls = [], []
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        for _ in range(3):
            p = RNG.rand(20).astype(np.float32)
            lab = np.clip(p + RNG.randn(20).astype(np.float32) * 0.3, 0, 1)
            ps.append(p)
            ls.append(lab)
            sess.run(updates, {pred: p, label: lab})
        got = sess.run(values)
    p, lab = np.concatenate(ps), np.concatenate(ls)
    pc, lc = p > 0.5, lab > 0.5
    tp = np.sum(pc & lc)
    ref = {"accuracy": np.mean(pc == lc), "precision": tp / pc.sum(), "recall": tp / lc.sum(),
           "mse": np.mean((p - lab) ** 2), "mae": np.mean(np.abs(p - lab)),
           "rmse": np.sqrt(np.mean((p - lab) ** 2)), "mean": p.mean(),
           "pearson": np.corrcoef(p, lab)[0, 1]}
    iou = [np.sum((pc == c) & (lc == c)) / np.sum((pc == c) | (lc == c)) for c in (False, True)]
    ref["iou"] = np.mean(iou)
    for name, value in ref.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-5, err_msg=name)
    order = np.argsort(-p)
    tpr = np.concatenate([[0], np.cumsum(lc[order]) / lc.sum()])
    fpr = np.concatenate([[0], np.cumsum(~lc[order]) / (~lc).sum()])
    np.testing.assert_allclose(got["auc"], np.trapz(tpr, fpr) if hasattr(np, "trapz")
                               else np.trapezoid(tpr, fpr), atol=0.02)


def test_streaming_covariance_weighted_and_aggregate_errors():
    x = tf.constant([1.0, 2.0, 4.0, 7.0])
    y = tf.constant([2.0, 1.0, 5.0, 3.0])
    w = tf.constant([1.0, 2.0, 1.0, 3.0])
    cov, update = metrics.streaming_covariance(x, y, weights=w)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert np.isnan(sess.run(cov))
        sess.run(update)
        got = sess.run(cov)
    xs, ys = np.repeat([1, 2, 4, 7], [1, 2, 1, 3]), np.repeat([2, 1, 5, 3], [1, 2, 1, 3])
    np.testing.assert_allclose(got, np.cov(xs, ys)[0, 1], rtol=1e-6)
    with pytest.raises(ValueError, match="at least one"):
        metrics.aggregate_metrics()
    values, ups = metrics.aggregate_metrics((cov, update), (cov, update))
    assert values == [cov, cov] and ups == [update, update]


def _write_idx(path, magic, dims, data, compress=True):
    header = np.array([magic, *dims], dtype=">u4").tobytes()
    opener = gzip.open if compress else open
    with opener(path, "wb") as f:
        f.write(header + np.asarray(data, np.uint8).tobytes())


def _tiny_mnist(directory, n_train=6, n_test=3, compress=True):
    images = RNG.randint(0, 256, size=(n_train, 2, 3)).astype(np.uint8)
    labels = np.arange(n_train) % 10
    test_images = RNG.randint(0, 256, size=(n_test, 2, 3)).astype(np.uint8)
    test_labels = np.array([9, 0, 4])[:n_test]
    names = [mnist.TRAIN_IMAGES, mnist.TRAIN_LABELS, mnist.TEST_IMAGES, mnist.TEST_LABELS]
    if not compress:
        names = [n[:-3] for n in names]
    _write_idx(os.path.join(directory, names[0]), 2051, [n_train, 2, 3], images, compress)
    _write_idx(os.path.join(directory, names[1]), 2049, [n_train], labels, compress)
    _write_idx(os.path.join(directory, names[2]), 2051, [n_test, 2, 3], test_images, compress)
    _write_idx(os.path.join(directory, names[3]), 2049, [n_test], test_labels, compress)
    return images, labels, test_images, test_labels


@pytest.mark.parametrize("compress", [True, False])
def test_mnist_read_data_sets_from_local_idx(tmp_path, compress):
    images, labels, test_images, test_labels = _tiny_mnist(str(tmp_path), compress=compress)
    data = mnist.read_data_sets(str(tmp_path), one_hot=True, validation_size=2, seed=3)
    assert isinstance(data, tf.contrib.learn.datasets.base.Datasets)
    assert (data.train.num_examples, data.validation.num_examples,
            data.test.num_examples) == (4, 2, 3)
    np.testing.assert_allclose(data.validation.images, images[:2].reshape(2, 6) / 255.0,
                               rtol=1e-6)
    np.testing.assert_array_equal(data.test.labels, np.eye(10)[test_labels])
    assert data.train.images.dtype == np.float32
    raw = mnist.read_data_sets(str(tmp_path), dtype=tf.uint8, reshape=False,
                               validation_size=0)
    np.testing.assert_array_equal(raw.train.images[..., 0], images)
    np.testing.assert_array_equal(raw.train.labels, labels)


def test_mnist_next_batch_epochs(tmp_path):
    images = np.arange(5 * 4, dtype=np.uint8).reshape(5, 2, 2, 1)
    ds = mnist.DataSet(images, np.arange(5), dtype=tf.uint8, seed=0)
    seen = []
    for _ in range(3):
        x, y = ds.next_batch(2)
        assert x.shape == (2, 4) and len(y) == 2
        np.testing.assert_array_equal(x[:, 0] // 4, y)  # images stay paired with labels
        seen.extend(y)
    assert sorted(seen[:5]) == [0, 1, 2, 3, 4] and ds.epochs_completed == 1
    ordered = mnist.DataSet(images, np.arange(5), dtype=tf.uint8)
    np.testing.assert_array_equal(ordered.next_batch(3, shuffle=False)[1], [0, 1, 2])
    with pytest.raises(TypeError, match="expected uint8 or float32"):
        mnist.DataSet(images, np.arange(5), dtype=tf.int32)


def test_mnist_missing_and_bad_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="never downloads.*train-images-idx3-ubyte.gz"):
        mnist.read_data_sets(str(tmp_path))
    _tiny_mnist(str(tmp_path))
    with pytest.raises(ValueError, match="Validation size should be between 0 and 6"):
        mnist.read_data_sets(str(tmp_path), validation_size=7)
    _write_idx(os.path.join(str(tmp_path), mnist.TRAIN_LABELS), 2051, [1], [0])
    with pytest.raises(ValueError, match="Invalid magic number 2051 in MNIST label file"):
        mnist.read_data_sets(str(tmp_path))
    assert mnist.dense_to_one_hot(np.array([1, 0]), 3).tolist() == [[0, 1, 0], [1, 0, 0]]


def test_projector_writes_pbtxt(tmp_path):
    projector = tf.contrib.tensorboard.plugins.projector
    config = projector.ProjectorConfig()
    embedding = config.embeddings.add()
    embedding.tensor_name = "embedding:0"
    embedding.metadata_path = "metadata.tsv"
    embedding.sprite.image_path = "sprite.png"
    embedding.sprite.single_image_dim.extend([28, 28])
    writer = tf.summary.FileWriter(str(tmp_path))
    projector.visualize_embeddings(writer, config)
    writer.close()
    text = (tmp_path / "projector_config.pbtxt").read_text()
    assert text == ('embeddings {\n  tensor_name: "embedding:0"\n  metadata_path: '
                    '"metadata.tsv"\n  sprite {\n    image_path: "sprite.png"\n'
                    '    single_image_dim: 28\n    single_image_dim: 28\n  }\n}\n')
    parsed = projector.ProjectorConfig()
    from google.protobuf import text_format
    text_format.Parse(text, parsed)
    assert parsed == config


def test_streaming_concat_grows_along_axis():
    values = tf.placeholder(tf.int32, [None, 2])
    concat, update = metrics.streaming_concat(values)
    assert concat.get_shape().as_list() == [None, 2]
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(concat).shape == (0, 2)
        sess.run(update, {values: [[1, 2]]})
        sess.run(update, {values: [[3, 4], [5, 6]]})
        np.testing.assert_array_equal(sess.run(concat), [[1, 2], [3, 4], [5, 6]])
    with pytest.raises(ValueError, match="must be known"):
        metrics.streaming_concat(tf.placeholder(tf.int32, [2, None]))


def test_load_dataset_mnist_reads_local_mnist_data(tmp_path, monkeypatch):
    # TF 1.x load_dataset("mnist") is load_mnist(): read_data_sets("MNIST-data") with its
    # defaults (validation_size=5000), relative to the working directory.
    os.makedirs(tmp_path / "MNIST-data")
    images, labels, _, test_labels = _tiny_mnist(str(tmp_path / "MNIST-data"), n_train=5004)
    monkeypatch.chdir(tmp_path)
    data = tf.contrib.learn.datasets.load_dataset("mnist")
    assert (data.train.num_examples, data.validation.num_examples,
            data.test.num_examples) == (4, 5000, 3)
    np.testing.assert_array_equal(data.test.labels, test_labels)
    np.testing.assert_array_equal(np.sort(data.train.labels), np.sort(labels[5000:]))
    np.testing.assert_allclose(data.validation.images[:3], images[:3].reshape(3, 6) / 255.0,
                               rtol=1e-6)
    with pytest.raises(ValueError, match="Name of dataset is not found: cifar"):
        tf.contrib.learn.datasets.load_dataset("cifar")
    with pytest.raises(AttributeError, match="load_dataset\\('iris'\\)"):
        tf.contrib.learn.datasets.load_dataset("iris")
