"""`tensorflow.examples.tutorials`."""
