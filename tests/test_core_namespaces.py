"""tf.debugging, tf.manip, tf.version, tf.sysconfig and tf.resource_loader: TF 1.15's names,
checked by value."""

import os

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import behavior


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_debugging_predicates_match_numpy():
    x = np.array([1.0, np.inf, -np.inf, np.nan, 0.0], np.float32)
    finite, inf, nan = run([tf.debugging.is_finite(x), tf.debugging.is_inf(x),
                            tf.debugging.is_nan(x)])
    np.testing.assert_array_equal(finite, np.isfinite(x))
    np.testing.assert_array_equal(inf, np.isinf(x))
    np.testing.assert_array_equal(nan, np.isnan(x))
    values = run([tf.debugging.is_non_decreasing([1, 2, 2, 3]),
                  tf.debugging.is_strictly_increasing([1, 2, 2, 3]),
                  tf.debugging.is_strictly_increasing([1, 2, 5])])
    assert [bool(v) for v in values] == [True, False, True]
    assert tf.debugging.is_numeric_tensor(tf.constant(1.0))
    assert not tf.debugging.is_numeric_tensor(tf.constant("a"))
    assert not tf.debugging.is_numeric_tensor(np.float32(1.0))


def test_debugging_assert_all_finite_and_near():
    x = tf.placeholder(tf.float32, [3])
    checked = tf.debugging.assert_all_finite(x, "bad values")
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(checked, {x: [1, 2, 3]}), [1, 2, 3])
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad values"):
            sess.run(checked, {x: [1, np.nan, 3]})
    y = tf.placeholder(tf.float64, [2])
    near = tf.debugging.assert_near(y, np.array([1.0, 2.0]), atol=1e-3, rtol=0.0)
    with tf.Session() as sess:
        sess.run(near, {y: [1.0005, 1.9995]})
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(near, {y: [1.01, 2.0]})


def test_debugging_static_checks():
    with pytest.raises(TypeError):
        tf.debugging.assert_proper_iterable(np.zeros(3))
    tf.debugging.assert_proper_iterable([1, 2])
    a, b = tf.constant([1.0]), tf.constant([1.0], tf.float64)
    assert tf.debugging.assert_same_float_dtype([a]) == tf.float32
    with pytest.raises(ValueError):
        tf.debugging.assert_same_float_dtype([a, b])
    with pytest.raises(ValueError):
        tf.debugging.assert_rank_in(tf.zeros([2, 2]), [1, 3])
    tf.debugging.assert_rank_in(tf.zeros([2, 2]), [1, 2])


def test_set_log_device_placement_records_the_switch():
    before = behavior.log_device_placement_enabled()
    try:
        tf.debugging.set_log_device_placement(True)
        assert behavior.log_device_placement_enabled()
        tf.debugging.set_log_device_placement(False)
        assert not behavior.log_device_placement_enabled()
    finally:
        tf.debugging.set_log_device_placement(before)


def test_manip_ops_match_numpy():
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    rolled, tiled, rev, resh, gathered = run([
        tf.manip.roll(x, shift=[1, -2], axis=[1, 2]),
        tf.manip.tile(x[0], [2, 1]),
        tf.manip.reverse(x, [2]),
        tf.manip.reshape(x, [4, -1]),
        tf.manip.gather_nd(x, [[1, 2], [0, 0]]),
    ])
    np.testing.assert_array_equal(rolled, np.roll(x, [1, -2], axis=[1, 2]))
    np.testing.assert_array_equal(tiled, np.tile(x[0], [2, 1]))
    np.testing.assert_array_equal(rev, x[:, :, ::-1])
    np.testing.assert_array_equal(resh, x.reshape(4, 6))
    np.testing.assert_array_equal(gathered, np.stack([x[1, 2], x[0, 0]]))
    scattered = run(tf.manip.scatter_nd([[1], [3]], [5, 7], [5]))
    np.testing.assert_array_equal(scattered, [0, 5, 0, 7, 0])
    image = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    batched = tf.manip.space_to_batch_nd(image, [2, 2], [[0, 0], [0, 0]])
    back = tf.manip.batch_to_space_nd(batched, [2, 2], [[0, 0], [0, 0]])
    b, r = run([batched, back])
    np.testing.assert_array_equal(b[:, 0, 0, 0], [0, 1, 4, 5])
    np.testing.assert_array_equal(r, image)


def test_version_constants():
    assert tf.version.VERSION == tf.VERSION == tf.__version__
    assert tf.version.VERSION.startswith("1.15")
    assert tf.version.GIT_VERSION == tf.GIT_VERSION
    assert tf.version.COMPILER_VERSION == tf.COMPILER_VERSION
    assert tf.version.GRAPH_DEF_VERSION == tf.GRAPH_DEF_VERSION
    assert (tf.GRAPH_DEF_VERSION_MIN_CONSUMER <= tf.GRAPH_DEF_VERSION
            and tf.GRAPH_DEF_VERSION_MIN_PRODUCER <= tf.GRAPH_DEF_VERSION)
    assert tf.version.GRAPH_DEF_VERSION_MIN_PRODUCER == tf.GRAPH_DEF_VERSION_MIN_PRODUCER
    assert tf.CXX11_ABI_FLAG == tf.sysconfig.CXX11_ABI_FLAG == 0
    assert tf.MONOLITHIC_BUILD == tf.sysconfig.MONOLITHIC_BUILD == 0


def test_sysconfig_paths_and_flags():
    package = os.path.dirname(os.path.abspath(tf.__file__))
    assert tf.sysconfig.get_lib() == package
    assert tf.sysconfig.get_include() == os.path.join(package, "include")
    assert tf.sysconfig.get_compile_flags() == [f"-I{package}/include",
                                                "-D_GLIBCXX_USE_CXX11_ABI=0"]
    assert tf.sysconfig.get_link_flags()[0] == f"-L{package}"


def test_resource_loader(tmp_path):
    here = os.path.dirname(os.path.abspath(__file__))
    assert tf.resource_loader.get_data_files_path() == here
    assert tf.resource_loader.get_path_to_datafile("a/b.txt") == os.path.join(here, "a/b.txt")
    package = os.path.dirname(os.path.abspath(tf.__file__))
    assert tf.resource_loader.get_root_dir_with_all_resources() == package
    with open(os.path.join(package, "__init__.py"), "rb") as f:
        assert tf.resource_loader.load_resource("__init__.py") == f.read()
    with pytest.raises(IOError):
        tf.resource_loader.load_resource("no/such/file")
    assert tf.resource_loader.readahead_file_path(str(tmp_path)) == str(tmp_path)


def test_io_aliases_at_the_root():
    assert tf.decode_json_example is tf.io.decode_json_example
    assert tf.parse_tensor is tf.io.parse_tensor
    assert tf.serialize_tensor is tf.io.serialize_tensor
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    np.testing.assert_array_equal(run(tf.parse_tensor(tf.serialize_tensor(x), tf.int64)), x)
