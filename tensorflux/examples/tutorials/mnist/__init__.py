"""`tensorflow.examples.tutorials.mnist`: `input_data` (the MNIST reader) and `mnist` (the
tutorial's two-hidden-layer model)."""
