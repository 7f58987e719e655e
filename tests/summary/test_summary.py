"""Summary ops and event files, read back with our reader (and TensorBoard's when installed)."""

import io
import os
import struct
import wave
import zlib

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.lib.formats import png
from tensorflux.protos import summary_pb2

COVERED_OPS = {"ScalarSummary", "HistogramSummary", "ImageSummary", "AudioSummaryV2",
               "TensorSummaryV2", "MergeSummary"}


def _parse(serialized):
    summary = summary_pb2.Summary()
    summary.ParseFromString(serialized)
    return summary


def _decode_png(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        chunks.setdefault(kind, b"")
        chunks[kind] += body
        pos += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    channels = {0: 1, 4: 2, 2: 3, 6: 4}[color]
    # Rows carry per-row filters (the encoder picks one per row): the PNG codec undoes them.
    image = png.decode(data)
    assert image.shape == (height, width, channels) and depth == 8
    return image


def test_scalar_histogram_and_merge_values():
    values = np.array([0.5, -2.0, 3.0, 3.0], np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        with tf.name_scope("outer"):
            mean = tf.summary.scalar("mean", tf.reduce_mean(x))
        hist = tf.summary.histogram("values", x, family="stats")
        merged = tf.summary.merge_all()
        assert set(tf.get_collection(tf.GraphKeys.SUMMARIES)) == {mean, hist}
        with tf.Session() as sess:
            out = _parse(sess.run(merged, {x: values}))
    tags = [v.tag for v in out.value]
    # As in TF: the Mean op took "outer/Mean", so the scope (case-insensitive) is mean_1.
    assert tags == ["outer/mean_1", "stats/stats/values"]
    assert out.value[0].simple_value == pytest.approx(values.mean())
    histo = out.value[1].histo
    assert (histo.min, histo.max, histo.num) == (-2.0, 3.0, 4.0)
    assert histo.sum == pytest.approx(values.sum())
    assert histo.sum_squares == pytest.approx(float(np.dot(values, values)))
    assert sum(histo.bucket) == 4
    limits = np.asarray(histo.bucket_limit)
    assert np.all(np.diff(limits) > 0)
    for v in values:  # every value falls in a bucket whose limit is above it
        index = np.searchsorted(limits, v, side="right")
        assert histo.bucket[index] > 0


def test_image_summary_png_roundtrip_and_scaling():
    images = np.random.RandomState(0).rand(2, 5, 3, 3).astype(np.float32)
    with tf.Graph().as_default():
        summary = tf.summary.image("pics", tf.constant(images), max_outputs=1)
        with tf.Session() as sess:
            out = _parse(sess.run(summary))
    (value,) = out.value
    assert value.tag == "pics/image"
    assert (value.image.height, value.image.width, value.image.colorspace) == (5, 3, 3)
    decoded = _decode_png(value.image.encoded_image_string)
    expected = np.round(images[0] * 255.0 / images[0].max()).astype(np.uint8)
    np.testing.assert_array_equal(decoded, expected)


def test_audio_and_text_summaries():
    clip = np.sin(np.linspace(0, 20, 800)).astype(np.float32)[None, :]
    with tf.Graph().as_default():
        audio = tf.summary.audio("sound", tf.constant(clip), 8000)
        text = tf.summary.text("note", tf.constant("hello"))
        with pytest.raises(ValueError):
            tf.summary.text("bad", tf.constant(1.0))
        with tf.Session() as sess:
            audio_out, text_out = sess.run([audio, text])
    sound = _parse(audio_out).value[0]
    assert sound.audio.sample_rate == 8000 and sound.audio.length_frames == 800
    with wave.open(io.BytesIO(sound.audio.encoded_audio_string)) as wav:
        frames = np.frombuffer(wav.readframes(800), "<i2")
    np.testing.assert_allclose(frames / 32767.0, clip[0], atol=1e-4)
    note = _parse(text_out).value[0]
    assert note.metadata.plugin_data.plugin_name == "text"
    assert list(note.tensor.string_val) == [b"hello"]


def test_merge_rejects_duplicate_tags():
    with tf.Graph().as_default():
        a = tf.summary.scalar("same", 1.0, collections=[])
        b = tf.summary.scalar("same", 2.0, collections=[])
        tags = [a.op.inputs[0], b.op.inputs[0]]
        with tf.Session() as sess:
            assert list(sess.run(tags)) == [b"same", b"same_1"]
            bad = tf.summary.merge([a, a])
            with pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate tag"):
                sess.run(bad)


def _events(logdir):
    (name,) = [f for f in os.listdir(logdir) if f.startswith("events.out.tfevents.")]
    return list(tf.summary.summary_iterator(os.path.join(logdir, name)))


def test_file_writer_event_file(tmp_path):
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [], name="x")
        summary = tf.summary.scalar("x", x)
        writer = tf.summary.FileWriter(str(tmp_path), graph)
        with tf.Session() as sess:
            for step in range(3):
                writer.add_summary(sess.run(summary, {x: step * 1.5}), global_step=step)
        writer.add_session_log(tf.summary.SessionLog(status=tf.summary.SessionLog.START), 3)
        writer.close()
    events = _events(str(tmp_path))
    assert events[0].file_version == "brain.Event:2"
    graph_def = tf.GraphDef()
    graph_def.ParseFromString(events[1].graph_def)
    assert any(node.name == "x" for node in graph_def.node)
    scalars = [(e.step, e.summary.value[0].simple_value) for e in events
               if e.WhichOneof("what") == "summary"]
    assert scalars == [(0, 0.0), (1, 1.5), (2, 3.0)]
    assert events[-1].session_log.status == tf.summary.SessionLog.START


def test_file_writer_cache_reuses_writers(tmp_path):
    first = tf.summary.FileWriterCache.get(str(tmp_path))
    assert tf.summary.FileWriterCache.get(str(tmp_path)) is first
    tf.summary.FileWriterCache.clear()


def test_tensorboard_reads_our_event_files(tmp_path):
    event_accumulator = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator")
    with tf.Graph().as_default() as graph:
        summary = tf.summary.scalar("loss", tf.constant(0.25))
        histogram = tf.summary.histogram("h", tf.constant([1.0, 2.0]))
        writer = tf.summary.FileWriter(str(tmp_path), graph)
        with tf.Session() as sess:
            writer.add_summary(sess.run(tf.summary.merge([summary, histogram])), 7)
        writer.close()
    accumulator = event_accumulator.EventAccumulator(str(tmp_path))
    accumulator.Reload()
    (scalar,) = accumulator.Scalars("loss")
    assert scalar.step == 7 and scalar.value == pytest.approx(0.25)
    assert accumulator.Graph() is not None
    assert accumulator.Histograms("h")[0].histogram_value.num == 2
