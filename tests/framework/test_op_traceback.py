"""Operation.traceback in TF1's format: (filename, lineno, function, source line) of the user
code that created the op."""

import tensorflux as tf


def _make_constant():
    return tf.constant(1.0, name="made_here")  # the creating line


def test_traceback_names_the_creating_function_and_line():
    with tf.Graph().as_default():
        op = _make_constant().op
    (filename, lineno, name, line), = op.traceback
    assert filename == __file__ and name == "_make_constant"
    assert line == 'return tf.constant(1.0, name="made_here")  # the creating line'
    assert op.location == f"{__file__}:{lineno}"
    for filename, lineno, name, line in op.traceback:  # TF1 programs unpack it like this
        assert (filename, name, line) and lineno > 0


def test_duplicate_variable_error_shows_where_it_was_made():
    with tf.Graph().as_default():
        tf.get_variable("v", [1])
        try:
            tf.get_variable("v", [1])
        except ValueError as error:
            message = str(error)
    assert f'File "{__file__}"' in message
    assert "in test_duplicate_variable_error_shows_where_it_was_made" in message
    assert 'tf.get_variable("v", [1])' in message
