"""`HParams`: named hyperparameters with types fixed at creation, parsed from "a=1,b=[2,3]".

Contract (TF 1.15): each hyperparameter keeps the type of its initial value (a list keeps
its element type); assignments are cast only when compatible (int -> float yes, float -> int,
number <-> bool and non-string -> string no) and otherwise raise ValueError.
"""

from __future__ import annotations

import json
import numbers
import re

__all__ = ["HParams", "parse_values"]

PARAM_RE = re.compile(r"""
  (?P<name>[a-zA-Z][\w\.]*)      # name: "var" or "x"
  (\[\s*(?P<index>\d+)\s*\])?    # optional index: "1"
  \s*=\s*
  ((?P<val>[^,\[]*)              # a single value
   |
   \[(?P<vals>[^\]]*)\])         # a list of values
  ($|,\s*)""", re.VERBOSE)


def _parse_fail(name, var_type, value, values):
    raise ValueError(f"Could not parse hparam '{name}' of type '{var_type.__name__}' with value "
                     f"'{value}' in {values}")


def _reuse_fail(name, values):
    raise ValueError(f"Multiple assignments to variable '{name}' in {values}")


def _bool_parser(name, values):
    def parse_bool(value):
        if value in ("true", "True"):
            return True
        if value in ("false", "False"):
            return False
        try:
            return bool(int(value))
        except ValueError:
            _parse_fail(name, bool, value, values)

    return parse_bool


def _scalar(name, parse, var_type, match, values, results):
    try:
        parsed = parse(match["val"])
    except ValueError:
        _parse_fail(name, var_type, match["val"], values)
    if not match["index"]:
        if name in results:
            _reuse_fail(name, values)
        results[name] = parsed
        return
    if name in results and not isinstance(results[name], dict):
        _reuse_fail(name, values)
    indexed = results.setdefault(name, {})
    index = int(match["index"])
    if index in indexed:
        _reuse_fail(f"{name}[{index}]", values)
    indexed[index] = parsed


def _list(name, parse, var_type, match, values, results):
    if match["index"] is not None:
        raise ValueError("Assignment of a list to a list index.")
    elements = [e for e in re.split("[ ,]", match["vals"]) if e]
    if name in results:
        _reuse_fail(name, values)
    try:
        results[name] = [parse(e) for e in elements]
    except ValueError:
        _parse_fail(name, var_type, match["vals"], values)


def parse_values(values, type_map, ignore_unknown=False) -> dict:
    """Parses "name=value,name=[v1,v2],name[i]=v" with the types of `type_map`.

    Args:
        values: the string.
        type_map: {name: type} (bool accepts true/True/false/False or an int).
        ignore_unknown: skip names missing from `type_map` instead of raising.

    Returns:
        {name: value, list of values, or {index: value}}.

    Raises:
        ValueError: malformed text, an unknown name, a value of the wrong type, or a name
            assigned twice.
    """
    results: dict = {}
    pos = 0
    while pos < len(values):
        match = PARAM_RE.match(values, pos)
        if not match:
            raise ValueError(f"Malformed hyperparameter value: {values[pos:]}")
        pos = match.end()
        groups = match.groupdict()
        name = groups["name"]
        if name not in type_map:
            if ignore_unknown:
                continue
            raise ValueError(f"Unknown hyperparameter type for {name}")
        var_type = type_map[name]
        parse = _bool_parser(name, values) if var_type is bool else var_type
        if groups["val"] is not None:
            _scalar(name, parse, var_type, groups, values, results)
        elif groups["vals"] is not None:
            _list(name, parse, var_type, groups, values, results)
        else:
            _parse_fail(name, var_type, "", values)
    return results


def _cast_to_type_if_compatible(name, param_type, value):
    fail_msg = f"Could not cast hparam '{name}' of type '{param_type}' from value {value!r}"
    if issubclass(param_type, type(None)):
        return value
    if issubclass(param_type, (str, bytes)) and not isinstance(value, (str, bytes)):
        raise ValueError(fail_msg)
    if issubclass(param_type, bool) != isinstance(value, bool):
        raise ValueError(fail_msg)
    if issubclass(param_type, numbers.Integral) and not isinstance(value, numbers.Integral):
        raise ValueError(fail_msg)
    if issubclass(param_type, numbers.Number) and not isinstance(value, numbers.Number):
        raise ValueError(fail_msg)
    return param_type(value)


class HParams:
    """A set of typed hyperparameters, readable as attributes (`hparams.learning_rate`).

    Example:
        >>> hparams = HParams(learning_rate=0.1, num_hidden_units=100)
        >>> hparams.parse("learning_rate=0.3").learning_rate
        0.3
    """

    _HAS_DYNAMIC_ATTRIBUTES = True

    def __init__(self, hparam_def=None, model_structure=None, **kwargs):
        self._hparam_types: dict = {}
        self._model_structure = model_structure
        if hparam_def is not None:
            raise ValueError("HParams: hparam_def protos are not supported by tensorflux; pass "
                             "the hyperparameters as keyword arguments")
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name, value) -> None:
        """Adds `name` with `value` (its type, or its first element's for a list).

        Raises:
            ValueError: the name is taken (an attribute or method), or an empty list.
        """
        if getattr(self, name, None) is not None:
            raise ValueError(f"Hyperparameter name is reserved: {name}")
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f"Multi-valued hyperparameters cannot be empty: {name}")
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, value)

    def set_hparam(self, name, value) -> None:
        """Sets an existing hyperparameter, casting compatibly.

        Raises:
            KeyError: unknown name.
            ValueError: a list for a scalar or vice versa, or an incompatible type.
        """
        param_type, is_list = self._hparam_types[name]
        if isinstance(value, dict) and is_list:
            current = list(getattr(self, name))
            for index, item in value.items():
                if index >= len(current):
                    raise ValueError(f"Index {index} out of range for hparam '{name}' of "
                                     f"length {len(current)}")
                current[index] = _cast_to_type_if_compatible(name, param_type, item)
            setattr(self, name, current)
        elif isinstance(value, list):
            if not is_list:
                raise ValueError(f"Must not pass a list for single-valued parameter: {name}")
            setattr(self, name, [_cast_to_type_if_compatible(name, param_type, v)
                                 for v in value])
        else:
            if is_list:
                raise ValueError(f"Must pass a list for multi-valued parameter: {name}.")
            setattr(self, name, _cast_to_type_if_compatible(name, param_type, value))

    def del_hparam(self, name) -> None:
        """Removes `name` (no error when absent)."""
        if hasattr(self, name):
            delattr(self, name)
            del self._hparam_types[name]

    def parse(self, values):
        """Overrides from a "name=value,..." string; returns self.

        Raises:
            ValueError: see `parse_values` and `set_hparam`.
        """
        type_map = {name: t for name, (t, _) in self._hparam_types.items()}
        return self.override_from_dict(parse_values(values, type_map))

    def override_from_dict(self, values_dict):
        """Sets each {name: value}; returns self."""
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    def set_model_structure(self, model_structure) -> None:
        self._model_structure = model_structure

    def get_model_structure(self):
        return self._model_structure

    def to_json(self, indent=None, separators=None, sort_keys=False) -> str:
        """The values as JSON (callables are left out)."""
        def remove_callables(x):
            if isinstance(x, dict):
                return {k: remove_callables(v) for k, v in x.items() if not callable(v)}
            if isinstance(x, list):
                return [remove_callables(i) for i in x if not callable(i)]
            return x

        return json.dumps(remove_callables(self.values()), indent=indent,
                          separators=separators, sort_keys=sort_keys)

    def parse_json(self, values_json):
        """Overrides from a JSON object string; returns self."""
        return self.override_from_dict(json.loads(values_json))

    def values(self) -> dict:
        """{name: value} of every hyperparameter."""
        return {name: getattr(self, name) for name in self._hparam_types}

    def get(self, key, default=None):
        """The value of `key`, else `default` (which must match the hyperparameter's type).

        Raises:
            ValueError: `default` is incompatible with the hyperparameter's type.
        """
        if key not in self._hparam_types:
            return default
        if default is not None:
            param_type, is_list = self._hparam_types[key]
            type_str = f"list<{param_type}>" if is_list else str(param_type)
            fail_msg = (f"Hparam '{key}' of type '{type_str}' is incompatible with "
                        f"default={default}")
            if is_list != isinstance(default, list):
                raise ValueError(fail_msg)
            try:
                for item in (default if is_list else [default]):
                    _cast_to_type_if_compatible(key, param_type, item)
            except ValueError as e:
                raise ValueError(f"{fail_msg}. {e}") from None
        return getattr(self, key)

    def __contains__(self, key) -> bool:
        return key in self._hparam_types

    def __str__(self) -> str:
        return str(sorted(self.values().items()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self})"
