"""tf.logging: levels, filtering, counting helpers and the "tensorflow" logger."""

import logging

import pytest

from tensorflux.platform import tf_logging as tf_log


@pytest.fixture(autouse=True)
def restore_verbosity():
    level = tf_log.get_logger().level
    yield
    tf_log.get_logger().setLevel(level)


def messages(caplog, level=None):
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "tensorflow" and (level is None or r.levelno == level)
    ]


def test_level_constants():
    assert (tf_log.DEBUG, tf_log.INFO, tf_log.WARN, tf_log.WARNING, tf_log.ERROR, tf_log.FATAL) == (
        10,
        20,
        30,
        30,
        40,
        50,
    )


def test_logger_is_named_tensorflow_and_defaults_to_warn():
    logger = tf_log.get_logger()
    assert logger is logging.getLogger("tensorflow")
    assert tf_log.get_verbosity() == tf_log.WARN


def test_set_verbosity_round_trips():
    tf_log.set_verbosity(tf_log.DEBUG)
    assert tf_log.get_verbosity() == 10
    tf_log.set_verbosity(tf_log.ERROR)
    assert tf_log.get_verbosity() == 40


def test_default_level_filters_info(caplog):
    caplog.set_level(logging.DEBUG)  # root only; the tensorflow logger keeps WARN
    tf_log.debug("d")
    tf_log.info("i")
    tf_log.warning("w")
    tf_log.warn("w2")
    tf_log.error("e")
    tf_log.fatal("f")
    assert messages(caplog) == ["w", "w2", "e", "f"]
    assert [r.levelno for r in caplog.records] == [30, 30, 40, 50]


def test_set_verbosity_controls_filtering(caplog):
    tf_log.set_verbosity(tf_log.INFO)
    tf_log.debug("hidden")
    tf_log.info("loss %.1f", 0.5)
    assert messages(caplog) == ["loss 0.5"]
    tf_log.set_verbosity(tf_log.ERROR)
    tf_log.warning("hidden too")
    tf_log.error("shown")
    assert messages(caplog) == ["loss 0.5", "shown"]


def test_log_vlog_and_log_if(caplog):
    tf_log.set_verbosity(tf_log.DEBUG)
    tf_log.log(tf_log.INFO, "a%d", 1)
    tf_log.vlog(tf_log.DEBUG, "b")
    tf_log.log_if(tf_log.INFO, "c", True)
    tf_log.log_if(tf_log.INFO, "never", False)
    assert messages(caplog) == ["a1", "b", "c"]


def test_log_every_n_counts_per_call_site(caplog):
    tf_log.set_verbosity(tf_log.INFO)
    for i in range(7):
        tf_log.log_every_n(tf_log.INFO, "every3 %d", 3, i)
    for i in range(2):
        tf_log.log_every_n(tf_log.INFO, "other %d", 3, i)
    assert messages(caplog) == ["every3 0", "every3 3", "every3 6", "other 0"]


def test_log_first_n(caplog):
    tf_log.set_verbosity(tf_log.INFO)
    for i in range(5):
        tf_log.log_first_n(tf_log.INFO, "first %d", 2, i)
    assert messages(caplog) == ["first 0", "first 1"]


def test_task_level_status_message_logs_at_error(caplog):
    tf_log.TaskLevelStatusMessage("status")
    assert messages(caplog, tf_log.ERROR) == ["status"]


def test_record_names_the_caller_not_the_wrapper(caplog):
    tf_log.warning("where")
    record = caplog.records[-1]
    assert record.filename == "test_logging.py"
    assert record.funcName == "test_record_names_the_caller_not_the_wrapper"


def test_fatal_does_not_exit(caplog):
    tf_log.fatal("still running")
    assert messages(caplog, tf_log.FATAL) == ["still running"]


def test_stderr_format_when_root_unconfigured(capsys, monkeypatch):
    # A fresh configuration with no root handlers installs TF1's stderr handler.
    root = logging.getLogger()
    logger = logging.getLogger("tensorflow")
    monkeypatch.setattr(root, "handlers", [])
    monkeypatch.setattr(logger, "handlers", [])
    monkeypatch.setattr(logger, "propagate", False)
    monkeypatch.setattr(tf_log, "_logger", None)
    tf_log.warning("hello %s", "there")
    tf_log.flush()
    assert capsys.readouterr().err == "WARNING:tensorflow:hello there\n"
