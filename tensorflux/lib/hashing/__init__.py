"""Hash functions whose values must match TensorFlow's (bucket ids, feature crosses)."""
