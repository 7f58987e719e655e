"""tf.summary.get_summary_description and tf.summary.initialize."""

import pytest

import tensorflux as tf


def _node(op, description):
    node = tf.NodeDef(name="s", op=op)
    node.attr["description"].s = description.encode()
    return node


def test_get_summary_description_parses_the_json():
    found = tf.summary.get_summary_description(_node("TensorSummary", '{"typeHint": "image"}'))
    assert isinstance(found, tf.summary.SummaryDescription) and found.type_hint == "image"
    same = tf.summary.get_summary_description(_node("TensorSummary", '{"type_hint": "audio"}'))
    assert same.type_hint == "audio"
    assert tf.summary.get_summary_description(_node("TensorSummary", "{}")).type_hint == ""


def test_get_summary_description_errors():
    with pytest.raises(ValueError, match="ScalarSummary"):
        tf.summary.get_summary_description(_node("ScalarSummary", "{}"))
    with pytest.raises(ValueError, match="JSON"):
        tf.summary.get_summary_description(_node("TensorSummary", "{not json"))


def test_initialize_without_a_contrib_writer_raises():
    with pytest.raises(RuntimeError, match="SummaryWriter"):
        tf.summary.initialize()
