"""Protocol buffer messages of tensorflux (wire-compatible with TensorFlow's where shared)."""
