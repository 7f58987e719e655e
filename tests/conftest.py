"""Suite-wide isolation: each test gets the `tensorflow` logger's default level back."""

import pytest

from tensorflux.platform import tf_logging


@pytest.fixture(autouse=True)
def _restore_tensorflow_logger_level():
    logger = tf_logging.get_logger()
    level = logger.level
    yield
    logger.setLevel(level)
