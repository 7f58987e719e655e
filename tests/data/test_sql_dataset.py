"""tf.data.experimental.SqlDataset over an SQLite file: rows as typed tuples, fed queries,
typed errors."""

import sqlite3

import numpy as np
import pytest

import tensorflux as tf


@pytest.fixture()
def database(tmp_path):
    path = str(tmp_path / "people.db")
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE people (name TEXT, age INTEGER, score REAL, member INTEGER)")
        conn.executemany("INSERT INTO people VALUES (?, ?, ?, ?)",
                         [("ada", 36, 9.5, 1), ("bob", 41, 7.25, 0), ("cy", 29, 8.0, 1)])
    return path


def _all(dataset, feed=None):
    iterator = tf.data.make_initializable_iterator(dataset) if feed else \
        tf.data.make_one_shot_iterator(dataset)
    element = iterator.get_next()
    out = []
    with tf.Session() as sess:
        if feed:
            sess.run(iterator.initializer, feed)
        while True:
            try:
                out.append(sess.run(element))
            except tf.errors.OutOfRangeError:
                return out


def test_rows_become_typed_tuples(database):
    with tf.Graph().as_default():
        ds = tf.data.experimental.SqlDataset(
            "sqlite", database, "SELECT name, age, score, member FROM people ORDER BY age",
            (tf.string, tf.int32, tf.float64, tf.bool))
        assert ds.output_types == (tf.string, tf.int32, tf.float64, tf.bool)
        rows = _all(ds)
    assert [r[0] for r in rows] == [b"cy", b"ada", b"bob"]
    np.testing.assert_array_equal([r[1] for r in rows], [29, 36, 41])
    assert rows[1][2] == 9.5
    assert [bool(r[3]) for r in rows] == [True, True, False]
    assert rows[0][1].dtype == np.int32 and rows[0][3].dtype == np.bool_


def test_query_fed_at_initialization_and_batched(database):
    with tf.Graph().as_default():
        query = tf.placeholder(tf.string, [])
        ds = tf.data.experimental.SqlDataset("sqlite", database, query, (tf.string, tf.int64))
        rows = _all(ds.batch(2), {query: "SELECT name, age FROM people WHERE age > 30"})
    assert [list(r[0]) for r in rows] == [[b"ada", b"bob"]]


def test_errors_are_typed(database):
    with tf.Graph().as_default():
        bad_query = tf.data.experimental.SqlDataset("sqlite", database, "SELECT nope FROM people",
                                                    (tf.string,))
        with pytest.raises(tf.errors.InvalidArgumentError, match="no such column"):
            _all(bad_query)
        wrong_width = tf.data.experimental.SqlDataset("sqlite", database,
                                                      "SELECT name, age FROM people",
                                                      (tf.string,))
        with pytest.raises(tf.errors.InvalidArgumentError, match="number of columns"):
            _all(wrong_width)
        driver = tf.data.experimental.SqlDataset("mysql", database, "SELECT 1", (tf.int64,))
        with pytest.raises(tf.errors.InvalidArgumentError, match="not supported"):
            _all(driver)
    with pytest.raises(TypeError, match="not supported"):
        tf.data.experimental.SqlDataset("sqlite", database, "SELECT 1", (tf.complex64,))
