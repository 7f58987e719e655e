"""Fault probes, round four (input pipelines and sessions): Session.close() never waits for a
tf.data element that is still being produced (the blocked run ends with CancelledError once the
element arrives, and the pipeline is released then); file writers that cannot write raise TF's
PermissionDeniedError naming the file and leave no partial checkpoint state."""

import contextlib
import os
import shutil
import subprocess
import threading
import time

import pytest

import tensorflux as tf


def _blocked_get_next(build):
    """Starts `sess.run(get_next)` on a pipeline whose map fn blocks until released."""
    release = threading.Event()
    entered = threading.Event()

    def slow(x):
        entered.set()
        release.wait(5)
        return x

    graph = tf.Graph()
    with graph.as_default():
        ds = build(tf.data.Dataset.range(10), lambda x: tf.py_func(slow, [x], tf.int64))
        element = ds.make_one_shot_iterator().get_next()
    sess = tf.Session(graph=graph)
    outcome = {}

    def run():
        try:
            outcome["value"] = sess.run(element)
        except tf.errors.OpError as err:
            outcome["error"] = err

    worker = threading.Thread(target=run)
    worker.start()
    assert entered.wait(5)
    return sess, worker, release, outcome


def test_close_does_not_wait_for_a_blocked_get_next_and_the_run_is_cancelled():
    builds = [lambda ds, f: ds.map(f),
              lambda ds, f: ds.map(f, num_parallel_calls=2).prefetch(2)]
    for build in builds:
        sess, worker, release, outcome = _blocked_get_next(build)
        start = time.monotonic()
        sess.close()
        assert time.monotonic() - start < 0.5  # before: close waited for the element
        assert worker.is_alive()
        release.set()
        worker.join(5)
        assert not worker.is_alive()
        assert "value" not in outcome  # before: the closed session's run returned it
        assert isinstance(outcome["error"], tf.errors.CancelledError)
        assert "Session has been closed" in str(outcome["error"])


def test_an_iterator_closed_mid_get_next_is_released_and_refuses_more_elements():
    from tensorflux.data import iterator_ops

    closed = []
    graph = tf.Graph()
    with graph.as_default():
        gate = threading.Event()

        def gen():
            try:
                yield 1
                gate.wait(5)
                yield 2
                yield 3
            finally:
                closed.append(True)

        ds = tf.data.Dataset.from_generator(gen, tf.int64)
    resource = iterator_ops.IteratorResource("it", [tf.int64], [tf.TensorShape([])])
    resource.initialize(ds, {})
    assert resource.get_next() == 1
    got = {}
    worker = threading.Thread(target=lambda: got.setdefault("v", resource.get_next()))
    worker.start()
    time.sleep(0.1)
    resource.close_resource()  # returns at once although get_next is inside the generator
    assert worker.is_alive() and not closed
    gate.set()
    worker.join(5)
    assert got["v"] == 2  # the element in flight is delivered to its caller ...
    assert closed == [True]  # ... and the generator is closed right after
    try:
        resource.get_next()
        raise AssertionError("get_next after close returned")
    except tf.errors.CancelledError as err:
        assert "'it' was closed" in str(err)


@contextlib.contextmanager
def _unwritable(path):
    """Makes `path` unwritable for this process (chattr +i as root, chmod otherwise)."""
    if os.getuid() == 0:
        if shutil.which("chattr") is None or subprocess.call(
                ["chattr", "+i", path], stderr=subprocess.DEVNULL) != 0:
            pytest.skip("root without a working chattr: cannot make a file unwritable")
        try:
            yield
        finally:
            subprocess.call(["chattr", "-i", path])
    else:
        mode = os.stat(path).st_mode
        os.chmod(path, 0o555 if os.path.isdir(path) else 0o444)
        try:
            yield
        finally:
            os.chmod(path, mode)


def _saved(directory, step):
    with tf.Graph().as_default():
        tf.Variable(float(step), name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return saver.save(sess, os.path.join(directory, "model.ckpt"), global_step=step)


def test_an_unwritable_checkpoint_dir_gives_permission_denied_and_no_partial_state(tmp_path):
    first = _saved(str(tmp_path), 1)
    before = sorted(os.listdir(tmp_path))
    with _unwritable(str(tmp_path)):
        with pytest.raises(tf.errors.PermissionDeniedError):
            _saved(str(tmp_path), 2)
        # the summary writer of MonitoredTrainingSession: before, a bare PermissionError
        with tf.Graph().as_default():
            tf.train.get_or_create_global_step()
            with pytest.raises(tf.errors.PermissionDeniedError) as info:
                tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path))
            assert str(tmp_path) in str(info.value) and "tfevents" in str(info.value)
    assert sorted(os.listdir(tmp_path)) == before  # no temporary or partial file left
    assert tf.train.latest_checkpoint(str(tmp_path)) == first


def test_an_unwritable_state_file_is_permission_denied_naming_it(tmp_path):
    first = _saved(str(tmp_path), 1)
    state = os.path.join(str(tmp_path), "checkpoint")
    with _unwritable(state):
        with pytest.raises(tf.errors.PermissionDeniedError) as info:  # before: PermissionError
            _saved(str(tmp_path), 2)
    assert f"{state};" in str(info.value)
    assert not [n for n in os.listdir(tmp_path) if "tfxtmp" in n]
    assert tf.train.latest_checkpoint(str(tmp_path)) == first
    assert tf.train.load_variable(first, "v") == 1.0


def test_string_input_producer_takes_match_filenames_once_and_fails_at_run_time_on_no_files(
        tmp_path):
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text(f"{name}-line\n")
    for pattern, expected in ((str(tmp_path / "*.txt"), [b"a.txt-line", b"b.txt-line"]),
                              (str(tmp_path / "*.none"), None)):
        with tf.Graph().as_default():  # before: TypeError "object of type 'Variable' has no len()"
            files = tf.train.match_filenames_once(pattern)
            queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
            _, line = tf.TextLineReader().read(queue)
            with tf.Session() as sess:
                sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
                coord = tf.train.Coordinator()
                threads = tf.train.start_queue_runners(sess, coord)
                got = []
                with pytest.raises(tf.errors.OutOfRangeError):
                    while True:
                        got.append(sess.run(line))
                coord.request_stop()
                if expected is not None:
                    coord.join(threads, stop_grace_period_secs=2)
                    assert got == expected
                else:
                    with pytest.raises(tf.errors.InvalidArgumentError) as info:
                        coord.join(threads, stop_grace_period_secs=2)
                    assert "requires a non-null input tensor" in str(info.value)
                    assert got == []
    with pytest.raises(ValueError):
        tf.train.string_input_producer([])


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_under_a_tfrecord_writer_is_resource_exhausted_naming_the_file():
    writer = tf.python_io.TFRecordWriter("/dev/full")
    with pytest.raises(tf.errors.ResourceExhaustedError) as info:  # before: bare OSError
        for _ in range(10):
            writer.write(b"x" * 100_000)
    assert "/dev/full; No space left on device" in str(info.value)
    with pytest.raises(tf.errors.ResourceExhaustedError):
        writer.close()


def test_a_cache_file_in_a_missing_directory_is_not_found_naming_it(tmp_path):
    path = str(tmp_path / "missing" / "cache")
    with tf.Graph().as_default():
        element = tf.data.Dataset.range(3).cache(path).make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.NotFoundError) as info:  # before: UnknownError
                sess.run(element)
    assert f"{path}.tfxcache; Dataset.cache() cannot write" in str(info.value)
    assert not os.path.exists(tmp_path / "missing")


def test_a_damaged_binary_meta_graph_says_so_naming_file_and_size(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = saver.save(sess, str(tmp_path / "m.ckpt"))
    meta = prefix + ".meta"
    data = open(meta, "rb").read()
    open(meta, "wb").write(data[: len(data) // 3])
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.DataLossError) as info:  # before: a utf-8 codec message
            tf.train.import_meta_graph(meta)
    message = str(info.value)
    assert meta in message and f"({len(data) // 3} bytes)" in message
    assert "not a binary MetaGraphDef" in message and "utf-8" not in message


@pytest.mark.parametrize("remote", [False, True])
def test_a_deadline_passed_inside_a_straight_line_step_is_deadline_exceeded(remote):
    server = tf.train.Server.create_local_server() if remote else None
    with tf.Graph().as_default():
        gate = threading.Event()

        def gen():
            yield 1
            gate.wait(5)
            yield 2
            yield 3

        element = tf.data.Dataset.from_generator(gen, tf.int64).make_one_shot_iterator().get_next()
        with tf.Session(server.target if remote else "") as sess:
            assert sess.run(element, options=tf.RunOptions(timeout_in_ms=2000)) == 1
            threading.Timer(0.4, gate.set).start()
            start = time.monotonic()
            with pytest.raises(tf.errors.DeadlineExceededError) as info:  # before: returned 2
                sess.run(element, options=tf.RunOptions(timeout_in_ms=100))
            assert 0.3 < time.monotonic() - start < 3
            assert "past the deadline" in str(info.value)
            assert sess.run(element) == 3  # the late element was dropped, as in TF
    if server is not None:
        server.stop()


def test_reinitializing_an_iterator_does_not_wait_for_a_blocked_get_next():
    with tf.Graph().as_default():
        gate = threading.Event()
        blocking = [True]

        def slow(x):
            if blocking[0]:
                gate.wait(5)
            return x

        dataset = tf.data.Dataset.range(5).map(lambda x: tf.py_func(slow, [x], tf.int64))
        iterator = dataset.make_initializable_iterator()
        element = iterator.get_next()
        with tf.Session() as sess:
            sess.run(iterator.initializer)
            got = {}
            worker = threading.Thread(target=lambda: got.setdefault("v", sess.run(element)))
            worker.start()
            time.sleep(0.2)
            blocking[0] = False  # the element in flight still waits on the gate
            start = time.monotonic()
            sess.run(iterator.initializer)  # before: waited for the element in flight
            assert time.monotonic() - start < 1.0 and worker.is_alive()
            gate.set()
            worker.join(5)
            assert got["v"] == 0  # the in-flight call ends on the old pipeline ...
            assert [sess.run(element) for _ in range(5)] == [0, 1, 2, 3, 4]  # ... then the new
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(element)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_an_event_file_on_a_full_disk_raises_resource_exhausted_and_the_flusher_survives(
        tmp_path, caplog):
    writer = tf.summary.FileWriter(str(tmp_path), flush_secs=0.05)
    events = writer._writer  # the disk fills up under the open event file
    events._file.close()
    events._file = open("/dev/full", "ab")  # noqa: SIM115 - closed by writer.close()
    summary = tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=1.0)])
    writer.add_summary(summary, 1)  # buffered
    time.sleep(0.3)  # the background flusher fails: logged, the thread lives on
    assert events._flusher.is_alive()
    assert any("Failed to flush the event file" in r.getMessage() and "No space left" in
               r.getMessage() for r in caplog.records)
    with pytest.raises(tf.errors.ResourceExhaustedError) as info:  # before: bare OSError
        for step in range(2000):
            writer.add_summary(summary, step)
        writer.flush()
    assert "events.out.tfevents" in str(info.value)
    with pytest.raises(tf.errors.ResourceExhaustedError):
        writer.close()
    events._flusher.join(2)
    assert not events._flusher.is_alive()


def test_padded_batch_to_a_smaller_shape_names_both_shapes_as_ints():
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_generator(lambda: iter([[1, 2], [1, 2, 3]]), tf.int32,
                                                 tf.TensorShape([None])).padded_batch(2, [2])
        element = dataset.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.DataLossError) as info:
                sess.run(element)
    assert "padded shape [2], largest element shape [3])" in str(info.value)


def test_a_damaged_file_fails_one_element_then_the_next_file_is_read(tmp_path):
    good = str(tmp_path / "good.tfr")
    with tf.python_io.TFRecordWriter(good) as writer:
        for i in range(5):
            writer.write(b"r%d" % i)
    data = bytearray(open(good, "rb").read())
    data[len(data) // 2] ^= 0xFF  # inside the third record
    bad = str(tmp_path / "bad.tfr")
    open(bad, "wb").write(bytes(data))
    missing = str(tmp_path / "missing.tfr")

    def drain(dataset):
        element = dataset.make_one_shot_iterator().get_next()
        out = []
        with tf.Session() as sess:
            while True:
                try:
                    out.append(sess.run(element))
                except tf.errors.OutOfRangeError:
                    return out
                except (tf.errors.DataLossError, tf.errors.NotFoundError) as err:
                    out.append(type(err).__name__)
                    assert bad in str(err) or missing in str(err)

    records = [b"r0", b"r1", b"r2", b"r3", b"r4"]
    with tf.Graph().as_default():  # before: the dataset ended at the error
        assert drain(tf.data.TFRecordDataset([bad, missing, good])) == \
            [b"r0", b"r1", "DataLossError", "NotFoundError"] + records
        skipping = tf.data.TFRecordDataset([bad, missing, good]).apply(
            tf.data.experimental.ignore_errors())  # before: DataLossError escaped
        assert drain(skipping) == [b"r0", b"r1"] + records
