"""make_template: an error raised by the wrapped function names where the template was
defined, and the helper that trims the call stack to the frames not shared with the caller."""

import traceback

import pytest
from op_helpers import graph  # noqa: F401

import tensorflux as tf
from tensorflux.ops.state.template import _skip_common_stack_elements


def _defined_here():
    return tf.make_template("adds_a_variable", lambda: tf.Variable(2.0) * 3.0)


def test_error_on_second_call_names_the_definition_site():
    tmpl = _defined_here()
    tmpl()
    with pytest.raises(ValueError, match=r"(?s)Trainable variable created.*originally defined "
                                         r"at:.*in _defined_here"):
        tmpl()


def test_non_string_exception_arguments_are_left_alone():
    def raises_with_code():
        raise KeyError(404)

    with pytest.raises(KeyError) as info:
        tf.make_template("code", raises_with_code)()
    assert info.value.args == (404,)


def test_skip_common_stack_elements():
    here = traceback.format_stack()
    there = traceback.format_stack()
    assert _skip_common_stack_elements(here, there) == here[-1:]
    assert _skip_common_stack_elements(["a", "b", "c"], ["a", "x"]) == ["b", "c"]
    assert _skip_common_stack_elements(["a", "b"], ["a", "b", "c"]) == ["b"]
