"""`tf.logging`: TensorFlow 1.x logging on the standard `logging` module.

Records go to the logger named "tensorflow" (TF1's name, so existing filters and
`logging.getLogger("tensorflow")` configuration keep working). Its level starts at WARN. On
first use, if the root logger has no handlers, a stderr handler with TF1's format
(`INFO:tensorflow:message`) is attached; records also propagate to the root, as in TF1.
Records name the caller of these functions as their source, not this module.

Example:
    >>> set_verbosity(INFO)
    >>> log_every_n(INFO, "step %d", 100, 7)   # logs on the 1st, 101st, ... call from this line
"""

from __future__ import annotations

import logging
import os
import sys
import threading

__all__ = [
    "DEBUG",
    "ERROR",
    "FATAL",
    "INFO",
    "WARN",
    "WARNING",
    "TaskLevelStatusMessage",
    "debug",
    "error",
    "fatal",
    "flush",
    "get_logger",
    "get_verbosity",
    "info",
    "log",
    "log_every_n",
    "log_first_n",
    "log_if",
    "set_verbosity",
    "vlog",
    "warn",
    "warning",
]

DEBUG = logging.DEBUG
INFO = logging.INFO
WARN = logging.WARN
WARNING = logging.WARNING
ERROR = logging.ERROR
FATAL = logging.FATAL

_logger: logging.Logger | None = None
_logger_lock = threading.Lock()
_THIS_FILE = os.path.normcase(os.path.abspath(__file__))
_LOGGING_FILE = os.path.normcase(os.path.abspath(logging.__file__))


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever `sys.stderr` is at emit time (so redirection and capture work)."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


def _is_internal(frame) -> bool:
    filename = os.path.normcase(os.path.abspath(frame.f_code.co_filename))
    return filename in (_THIS_FILE, _LOGGING_FILE)


def _caller_frame():
    frame = sys._getframe(1)
    while frame is not None and _is_internal(frame):
        frame = frame.f_back
    return frame


def _find_caller(stack_info: bool = False, stacklevel: int = 1):
    frame = _caller_frame()
    if frame is None:
        return "(unknown file)", 0, "(unknown function)", None
    return frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name, None


def get_logger() -> logging.Logger:
    """Returns the "tensorflow" logger, configuring it on first use."""
    global _logger
    if _logger is not None:
        return _logger
    with _logger_lock:
        if _logger is None:
            logger = logging.getLogger("tensorflow")
            logger.findCaller = _find_caller
            if logger.level == logging.NOTSET:
                logger.setLevel(WARN)
            # NOTE: as TF1, leave output to the root's handlers when the program configured them.
            if not logging.getLogger().handlers:
                handler = _StderrHandler()
                handler.setFormatter(logging.Formatter(logging.BASIC_FORMAT))
                logger.addHandler(handler)
            _logger = logger
    return _logger


def set_verbosity(v: int) -> None:
    """Sets the threshold: records below level `v` are dropped."""
    get_logger().setLevel(v)


def get_verbosity() -> int:
    """Returns the effective threshold of the "tensorflow" logger."""
    return get_logger().getEffectiveLevel()


def log(level: int, msg, *args, **kwargs) -> None:
    get_logger().log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs) -> None:
    get_logger().debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs) -> None:
    get_logger().info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs) -> None:
    get_logger().warning(msg, *args, **kwargs)


warn = warning


def error(msg, *args, **kwargs) -> None:
    get_logger().error(msg, *args, **kwargs)


def fatal(msg, *args, **kwargs) -> None:
    """Logs at FATAL; like TF1 it does not exit the process."""
    get_logger().critical(msg, *args, **kwargs)


def vlog(level: int, msg, *args, **kwargs) -> None:
    get_logger().log(level, msg, *args, **kwargs)


def log_if(level: int, msg, condition, *args) -> None:
    """Logs `msg % args` at `level` if `condition` is true."""
    if condition:
        vlog(level, msg, *args)


_log_counts: dict[tuple[str, int], int] = {}
_log_counts_lock = threading.Lock()


def _next_count_for_call_site() -> int:
    frame = _caller_frame()
    site = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else ("", 0)
    with _log_counts_lock:
        count = _log_counts.get(site, 0)
        _log_counts[site] = count + 1
    return count


def log_every_n(level: int, msg, n: int, *args) -> None:
    """Logs on the 1st, (n+1)th, (2n+1)th ... call from the same source line.

    Example: `log_every_n(INFO, "loss %f", 100, loss)` inside a training loop.
    """
    count = _next_count_for_call_site()
    log_if(level, msg, count % n == 0, *args)


def log_first_n(level: int, msg, n: int, *args) -> None:
    """Logs only the first `n` calls from the same source line."""
    count = _next_count_for_call_site()
    log_if(level, msg, count < n, *args)


def TaskLevelStatusMessage(msg) -> None:  # noqa: N802 - TF1 name
    """Logs a task status message (at ERROR, as TF1 did)."""
    error(msg)


def flush() -> None:
    """Flushes every handler of the "tensorflow" logger."""
    for handler in get_logger().handlers:
        handler.flush()
