"""examples/slim_cnn.py trains (a few steps here) well above chance and reports end points."""

import importlib.util
import os

import pytest

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples", "slim_cnn.py")


def _load():
    spec = importlib.util.spec_from_file_location("example_slim_cnn", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_slim_cnn_learns(capsys):
    # The synthetic problem keeps the test fast (importing scikit-learn takes seconds).
    accuracy = _load().main(["--steps", "45", "--batch_size", "32", "--min_accuracy", "0.7",
                             "--synthetic"])
    assert accuracy >= 0.7  # chance is 0.1
    out = capsys.readouterr().out
    assert "end points: conv1, pool1, conv2, pool2, fc3, logits" in out
    assert "synthetic prototypes" in out and "check passed" in out


def test_slim_cnn_check_fails_loudly():
    with pytest.raises(SystemExit, match="check failed"):
        _load().main(["--steps", "1", "--batch_size", "8", "--min_accuracy", "1.01",
                             "--synthetic"])
