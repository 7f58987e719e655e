"""`tf.test`: the TestCase of TF 1.x tests, gradient checking, benchmarks and device queries."""

import os
from unittest import mock  # noqa: F401 - `tf.test.mock`

from tensorflux.ops.autodiff.checker import compute_gradient, compute_gradient_error  # noqa: F401
from tensorflux.testing.benchmark import Benchmark, benchmark_config  # noqa: F401
from tensorflux.testing.local_cluster import create_local_cluster  # noqa: F401
from tensorflux.testing.test_case import (TestCase, assert_equal_graph_def,  # noqa: F401
                                          get_temp_dir, main)


def is_gpu_available(cuda_only: bool = False, min_cuda_compute_capability=None) -> bool:
    """tensorflux runs on CPUs only."""
    return False


def is_built_with_cuda() -> bool:
    return False


def is_built_with_gpu_support() -> bool:
    return False


def is_built_with_rocm() -> bool:
    return False


def gpu_device_name() -> str:
    return ""


def test_src_dir_path(relative_path: str) -> str:
    """The absolute path of `relative_path` under the source tree of the package's tests.

    TF 1.x resolves it under the runfiles of `tensorflow/`; tensorflux under the directory
    that holds the `tensorflux` package.
    """
    package_dir = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(os.path.dirname(package_dir), relative_path)
