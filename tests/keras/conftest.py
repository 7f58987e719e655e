"""Every keras test starts and ends with a fresh Keras graph and session, seeded."""

import numpy as np
import pytest

import tensorflux as tf


@pytest.fixture(autouse=True)
def _fresh_graph():
    tf.keras.backend.clear_session()
    np.random.seed(0)
    tf.set_random_seed(0)
    yield
    tf.keras.backend.clear_session()
