"""tf.nest: flatten / pack / map / structure checks, against TF's documented behaviour."""

import collections

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf

P = collections.namedtuple("P", "x y")
P2 = collections.namedtuple("P", "x y")


def test_flatten_orders_dicts_by_key_and_keeps_leaves():
    assert tf.nest.flatten({"b": 1, "a": [2, (3, None)]}) == [2, 3, None, 1]
    assert tf.nest.flatten(None) == [None]
    assert tf.nest.flatten("ab") == ["ab"]
    arr = np.zeros(2)
    assert tf.nest.flatten(arr)[0] is arr
    assert tf.nest.flatten({1, 2}) == [{1, 2}]
    assert tf.nest.flatten([]) == []
    assert tf.nest.flatten(P(1, [2, 3])) == [1, 2, 3]


def test_pack_keeps_types_and_mapping_order():
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    assert tf.nest.flatten(od) == [2, 1]
    packed = tf.nest.pack_sequence_as(od, [10, 20])
    assert isinstance(packed, collections.OrderedDict)
    assert list(packed.items()) == [("b", 20), ("a", 10)]
    assert tf.nest.pack_sequence_as(P(0, (0, 0)), [1, 2, 3]) == P(1, (2, 3))
    assert tf.nest.pack_sequence_as(1, [5]) == 5
    dd = collections.defaultdict(list, {"k": 0})
    out = tf.nest.pack_sequence_as(dd, [7])
    assert isinstance(out, collections.defaultdict) and out["k"] == 7


def test_pack_errors():
    with pytest.raises(ValueError, match="Structure had 2 atoms, but flat_sequence had 1"):
        tf.nest.pack_sequence_as([1, 2], [1])
    with pytest.raises(TypeError, match="incompatible type"):
        tf.nest.pack_sequence_as([1, 2], 1)


def test_assert_same_structure():
    tf.nest.assert_same_structure(P(1, 2), P2(3, 4))
    tf.nest.assert_same_structure({"a": 1}, collections.OrderedDict(a=[1][0]))
    tf.nest.assert_same_structure([1], (1,), check_types=False)
    with pytest.raises(TypeError, match="sequence type"):
        tf.nest.assert_same_structure([1], (1,))
    with pytest.raises(ValueError, match="same set of keys"):
        tf.nest.assert_same_structure({"a": 1}, {"b": 1})
    with pytest.raises(ValueError, match="not a sequence"):
        tf.nest.assert_same_structure([1, [2]], [1, 2])
    with pytest.raises(ValueError, match="number of elements"):
        tf.nest.assert_same_structure([1, 2], [1])


def test_map_structure_and_is_nested():
    assert tf.nest.map_structure(lambda a, b: a + b, P(1, [2]), P(3, [4])) == P(4, [6])
    assert tf.nest.map_structure(lambda x: x * 2, {"a": (1, 2)}) == {"a": (2, 4)}
    assert tf.nest.map_structure(lambda a, b: a, [1], (1,), check_types=False) == [1]
    with pytest.raises(TypeError):
        tf.nest.map_structure(lambda a, b: a, [1], (1,))
    with pytest.raises(ValueError, match="at least one structure"):
        tf.nest.map_structure(lambda x: x)
    with pytest.raises(ValueError, match="check_types"):
        tf.nest.map_structure(lambda x: x, [1], bogus=True)
    assert tf.nest.is_nested([]) and tf.nest.is_nested({}) and tf.nest.is_nested(P(1, 2))
    assert not tf.nest.is_nested("a") and not tf.nest.is_nested(np.zeros(3))


def test_tensors_are_leaves():
    with tf.Graph().as_default():
        t = tf.constant(1.0)
        assert tf.nest.flatten({"t": [t]})[0] is t


_leaf = st.one_of(st.integers(), st.none(), st.text(max_size=3))
_struct = st.recursive(
    _leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner),
                            st.dictionaries(st.text(max_size=2), inner, max_size=3),
                            st.builds(P, inner, inner)),
    max_leaves=12)


@settings(max_examples=60, deadline=None)
@given(_struct)
def test_flatten_pack_round_trip(structure):
    flat = tf.nest.flatten(structure)
    assert tf.nest.pack_sequence_as(structure, flat) == structure
    tf.nest.assert_same_structure(structure, tf.nest.map_structure(lambda x: 0, structure))
    numbered = tf.nest.pack_sequence_as(structure, list(range(len(flat))))
    assert tf.nest.flatten(numbered) == list(range(len(flat)))
