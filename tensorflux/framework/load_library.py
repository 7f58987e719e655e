"""`tf.load_op_library`, `tf.load_library`, `tf.load_file_system_library`.

They load TensorFlow's compiled C++ plug-ins (custom ops and kernels, file systems). tensorflux
runs no C++ kernels, so each raises `NotFoundError` naming the library; ops are written in
Python here (`framework.op_def.define_op`).
"""

from __future__ import annotations

import os

from tensorflux.framework import errors

__all__ = ["load_op_library", "load_library", "load_file_system_library"]

_WHY = ("custom C++ ops and kernels are not supported by tensorflux (it runs Python/NumPy "
        "kernels only); define the op with tensorflux.framework.op_def.define_op instead")


def _refuse(what: str, path) -> None:
    path = os.fspath(path)
    state = "" if os.path.exists(path) else " (no such file or directory)"
    raise errors.NotFoundError(None, None, f"{what}: cannot load {path}{state}: {_WHY}.")


def load_op_library(library_filename):
    """Would load a C++ op library; always raises.

    Raises:
        NotFoundError: always, naming `library_filename`.
    """
    _refuse("load_op_library", library_filename)


def load_library(library_location):
    """Would load a C++ kernel library (a file or a directory of them); always raises.

    Raises:
        NotFoundError: always, naming `library_location`.
    """
    _refuse("load_library", library_location)


def load_file_system_library(library_filename):
    """Would load a C++ file system plug-in; always raises.

    Raises:
        NotFoundError: always, naming `library_filename`.
    """
    _refuse("load_file_system_library", library_filename)
