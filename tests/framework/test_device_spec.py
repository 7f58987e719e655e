"""tf.DeviceSpec and device scopes: parsing, printing, merging, device functions."""

import pytest

import tensorflux as tf
from tensorflux.framework.device_spec import canonical_name, merge_device

D = tf.DeviceSpec


@pytest.mark.parametrize("text,canonical", [
    ("/cpu:1", "/device:CPU:1"),
    ("/device:CPU:1", "/device:CPU:1"),
    ("/job:ps/task:0", "/job:ps/task:0"),
    ("CPU:0", "/device:CPU:0"),
    ("/gpu:0", "/device:GPU:0"),
    ("/job:worker/replica:0/task:1/device:GPU:2", "/job:worker/replica:0/task:1/device:GPU:2"),
    ("/job:w/device:cpu:*", "/job:w/device:CPU:*"),
    ("/replica:2", "/replica:2"),
    ("", ""),
    ("/task:1/cpu:0", "/task:1/device:CPU:0"),
    ("cpu", "/device:CPU:*"),
    ("job:ps", "/job:ps"),
    ("/job:ps/job:wk", "/job:wk"),
    ("/device:XLA_CPU:0", "/device:XLA_CPU:0"),
])
def test_parse_and_print(text, canonical):
    assert D.from_string(text).to_string() == canonical
    assert canonical_name(text) == canonical


@pytest.mark.parametrize("text,message", [
    ("/foo:1", "Unknown attribute 'foo'"),
    ("/device:CPU", "Unknown attribute 'device'"),
    ("localhost", "Unknown attribute 'localhost'"),
    ("/job:a:b", "Unknown attribute 'job'"),
    ("/device:CPU:1/cpu:0", "Multiple device types"),
    ("/task:x", "invalid literal"),
])
def test_malformed_specs(text, message):
    with pytest.raises(ValueError, match=message):
        D.from_string(text)


def test_fields_equality_and_repr():
    spec = D(job="ps", replica=0, task=3, device_type="cpu", device_index=1)
    assert spec.to_string() == "/job:ps/replica:0/task:3/device:CPU:1"
    assert (spec.job, spec.replica, spec.task, spec.device_type, spec.device_index) == \
        ("ps", 0, 3, "CPU", 1)
    assert spec == D.from_string("/job:ps/replica:0/task:3/cpu:1")
    assert hash(spec) == hash(D.from_string("/job:ps/replica:0/task:3/cpu:1"))
    assert spec != "/job:ps/replica:0/task:3/device:CPU:1"
    assert repr(D(job="ps", device_index=3)) == (
        "<DeviceSpec(job=ps, replica=None, task=None, device_type=None, device_index=3)>")
    assert D(job="ps", device_index=3).to_string() == "/job:ps"


def test_merging_as_in_tf1():
    base = D.from_string("/job:ps/task:0")
    merged = base.make_merged_spec(D.from_string("/cpu:1"))
    assert merged.to_string() == "/job:ps/task:0/device:CPU:1"
    assert base.to_string() == "/job:ps/task:0", "make_merged_spec returns a new spec"
    assert D.from_string("/job:ps/task:0").make_merged_spec(
        "/job:wk/device:GPU:1").to_string() == "/job:wk/task:0/device:GPU:1"
    assert base.merge_from(D(task=3)) is None and base.to_string() == "/job:ps/task:3"
    spec = D.from_string("/job:ps")
    spec.task = 4
    assert spec.to_string() == "/job:ps/task:4"
    assert spec.parse_from_string("/task:5/cpu:1") is spec
    assert spec.to_string() == "/job:ps/task:5/device:CPU:1"
    assert spec.replace(job="w").to_string() == "/job:w/task:5/device:CPU:1"
    assert merge_device("/job:ps/cpu:0", "/cpu:*") == "/job:ps/device:CPU:0"
    assert merge_device("/job:ps/cpu:0", "") == "/job:ps/device:CPU:0"


def test_matching_and_compatibility():
    full = D.from_string("/job:localhost/replica:0/task:0/device:CPU:1")
    assert D.from_string("/cpu:1").matches(full)
    assert D.from_string("/job:localhost").matches(full)
    assert not D.from_string("/cpu:0").matches(full)
    assert D.from_string("/job:a").is_compatible_with(D.from_string("/cpu:0"))
    assert not D.from_string("/job:a").is_compatible_with(D.from_string("/job:b"))


def test_device_scopes_and_device_functions():
    with tf.Graph().as_default():
        with tf.device("/job:ps"):
            with tf.device("/task:1"):
                with tf.device("/cpu:0"):
                    a = tf.constant(1.0, name="a")
            with tf.device(lambda op: "/gpu:0" if op.type == "Const" else ""):
                b = tf.constant(2.0, name="b")
                c = tf.add(b, b, name="c")
            with tf.device(None):
                e = tf.constant(1, name="e")
            with tf.device(D(job="w", device_type="CPU")):
                f = tf.constant(1, name="f")
            with tf.device("/job:ps/task:0"):
                with tf.device("/job:wk"):
                    i = tf.constant(1, name="i")
        with tf.device("/cpu:0"):
            with tf.device(lambda op: "/job:x/task:1"):
                j = tf.constant(1, name="j")
            with tf.device(lambda op: D(device_type="GPU")):
                k = tf.constant(1, name="k")
        with tf.device("/cpu:1"):
            with tf.colocate_with(a):
                m = tf.constant(1, name="m")
    assert a.device == "/job:ps/task:1/device:CPU:0"
    assert b.device == "/job:ps/device:GPU:0" and c.device == "/job:ps"
    assert e.device == "" and f.device == "/job:w/device:CPU:*"
    assert i.device == "/job:wk/task:0"
    assert j.device == "/job:x/task:1/device:CPU:0" and k.device == "/device:GPU:0"
    assert m.device == a.device and m.op.colocation_groups() == [b"loc:@a"]
