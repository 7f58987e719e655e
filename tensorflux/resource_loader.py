"""`tf.resource_loader`: paths of data files that ship beside Python modules."""

import inspect
import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def load_resource(path):
    """Returns the bytes of the file at `path`, relative to the package's root directory.

    Args:
        path: a path relative to the `tensorflux` package directory.

    Returns:
        The file's contents as bytes.

    Raises:
        IOError: the file cannot be read.
    """
    with open(os.path.abspath(os.path.join(_PACKAGE_DIR, path)), "rb") as f:
        return f.read()


def get_data_files_path() -> str:
    """The directory of the Python file that calls this function."""
    return os.path.dirname(inspect.getfile(sys._getframe(1)))


def get_root_dir_with_all_resources() -> str:
    """The root directory under which all resources are found: the package directory.

    TensorFlow searches Bazel runfiles first; an installed package has none, so the answer is
    the directory this module lives in, as TensorFlow's fallback gives.
    """
    return _PACKAGE_DIR


def get_path_to_datafile(path) -> str:
    """`path` joined to the directory of the Python file that calls this function.

    Args:
        path: a path relative to the caller's directory.

    Returns:
        The joined path (not checked for existence).
    """
    return os.path.join(os.path.dirname(inspect.getfile(sys._getframe(1))), path)


def readahead_file_path(path, readahead="128M"):  # noqa: ARG001 - TF signature
    """Returns `path` unchanged: readahead caching is a no-op for local files."""
    return path
