"""Helpers shared by the op tests: a fresh default graph per test (autouse where imported), a
one-shot session run, and the gradient-case builder of the `GRADIENT_CASES` tables."""

import numpy as np
import pytest

import tensorflux as tf


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def gradient_case(fn, *shapes, seed=0):
    """A `GRADIENT_CASES` builder: `fn(tf, *xs)` on float64 placeholders of `shapes`, fed
    uniform values in [-1, 1) drawn with `seed`."""

    def build(tf):
        rng = np.random.RandomState(seed)
        xs = [tf.placeholder(tf.float64, s) for s in shapes]
        values = [rng.uniform(-1, 1, s) for s in shapes]
        return fn(tf, *xs), xs, values

    return build


def check_error_row(build, phase, error, words, run_fetch=None):
    """One row of a family's error table: `build()` raises `error` matching `words` at graph
    construction (`phase == "build"`), or returns (fetch, feed) whose run raises it."""
    if phase == "build":
        with pytest.raises(error, match=words):
            build()
        return
    fetch, feed = build()
    with pytest.raises(error, match=words):
        (run_fetch or run)(fetch, feed)
