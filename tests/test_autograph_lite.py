"""tf.autograph and tf.lite: accepted where TF1 programs only mark or configure, clear
NotImplementedErrors where conversion would be needed."""

import pytest

import tensorflux as tf


def test_autograph_marks_pass_through_and_conversion_raises():
    @tf.autograph.experimental.do_not_convert
    def double(x):
        return 2 * x

    assert double(3) == 6
    assert tf.autograph.do_not_convert()(lambda: 5)() == 5
    tf.autograph.set_verbosity(3)
    assert tf.autograph.experimental.Feature.ALL.value == "ALL"
    with pytest.raises(NotImplementedError, match="tf.cond / tf.while_loop"):
        tf.autograph.to_graph(double)
    with pytest.raises(NotImplementedError, match="AutoGraph"):
        tf.autograph.to_code(double)


def test_lite_converter_raises_at_convert():
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [1, 2])
        y = tf.identity(x * 2)
        converter = tf.lite.TFLiteConverter.from_session(sess, [x], [y])
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        with pytest.raises(NotImplementedError, match="SavedModel"):
            converter.convert()
    with pytest.raises(NotImplementedError, match="Interpreter"):
        tf.lite.Interpreter(model_path="model.tflite")
