"""`tf.test`: gradient checking and device queries."""

from tensorflux.ops.autodiff.checker import compute_gradient, compute_gradient_error  # noqa: F401


def is_gpu_available(cuda_only: bool = False, min_cuda_compute_capability=None) -> bool:
    """tensorflux runs on CPUs only."""
    return False


def is_built_with_cuda() -> bool:
    return False


def gpu_device_name() -> str:
    return ""
