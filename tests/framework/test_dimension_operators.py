"""Dimension operators with non-dimension operands, as TF 1.x defines them."""

import pytest

import tensorflux as tf

Dimension = tf.Dimension


def test_sequence_repetition_by_a_dimension():
    three = Dimension(3)
    assert ["a"] * three == ["a", "a", "a"]
    assert three * ["b"] == ["b", "b", "b"]
    assert ("x",) * three == ("x", "x", "x")
    with pytest.raises(TypeError):
        ["a"] * Dimension(None)  # an unknown count cannot repeat a list


def test_modulo_both_ways():
    seven = Dimension(7)
    assert seven % 3 == 1
    assert 17 % seven == 3
    assert (Dimension(None) % 3).value is None
    assert (5 % Dimension(None)).value is None


def test_true_division_is_refused_with_a_hint():
    with pytest.raises(TypeError, match=r"for /: 'Dimension' and 'int', please use //"):
        Dimension(8) / 2
    with pytest.raises(TypeError, match=r"for /: 'int' and 'Dimension', please use //"):
        8 / Dimension(2)
    assert (Dimension(9) // 2).value == 4


def test_equality_with_values_that_are_no_dimension():
    five = Dimension(5)
    assert (five == (5,)) is False
    assert (five != (5,)) is True
    assert (five == "five") is False
    assert five != object()
    assert (Dimension(None) == 5) is None
    assert (five == 5) is True
