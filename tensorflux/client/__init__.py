"""`tensorflux.client`: TF1's `tensorflow.python.client` modules (the step timeline)."""

from tensorflux.client import timeline
