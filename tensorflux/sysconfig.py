"""`tf.sysconfig`: where TensorFlow's headers and framework library live, for C++ op builds.

tensorflux has no C++ framework library, and `tf.load_op_library` refuses compiled ops; these
functions still answer in TensorFlow 1.15's form (paths under the installed package) so build
scripts that only print or parse them keep working.
"""

import os

from tensorflux.platform.version import CXX11_ABI_FLAG, MONOLITHIC_BUILD  # noqa: F401

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def get_include() -> str:
    """The directory TensorFlow keeps its C++ headers in: `include/` under the package."""
    return os.path.join(_PACKAGE_DIR, "include")


def get_lib() -> str:
    """The directory of the framework library: the package directory."""
    return _PACKAGE_DIR


def get_compile_flags() -> list:
    """The compiler flags of a custom-op build: the include path and the C++11 ABI choice."""
    return [f"-I{get_include()}", f"-D_GLIBCXX_USE_CXX11_ABI={CXX11_ABI_FLAG}"]


def get_link_flags() -> list:
    """The linker flags of a custom-op build (TensorFlow 1.15's form; no such library here)."""
    return [f"-L{get_lib()}", "-l:libtensorflow_framework.so.1"]
