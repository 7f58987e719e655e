"""Keras' registry of user objects (`tf.keras.utils.get_custom_objects`, `CustomObjectScope`,
`register_keras_serializable`): names that `get` / `deserialize` / `load_model` resolve
before the built-in ones."""

from __future__ import annotations

import contextlib
import inspect
import threading

__all__ = ["get_custom_objects", "CustomObjectScope", "custom_object_scope", "lookup",
           "merged", "register_keras_serializable", "get_registered_name",
           "get_registered_object"]

_GLOBAL_CUSTOM_OBJECTS: dict = {}
_GLOBAL_CUSTOM_NAMES: dict = {}
_scope = threading.local()


def get_custom_objects():
    """The global dict of custom objects (update it to register names)."""
    return _GLOBAL_CUSTOM_OBJECTS


def _scopes():
    if not hasattr(_scope, "stack"):
        _scope.stack = []
    return _scope.stack


def merged(custom_objects=None) -> dict:
    """The global objects, those of the open scopes, then `custom_objects` (later wins)."""
    out = dict(_GLOBAL_CUSTOM_OBJECTS)
    for objects in _scopes():
        out.update(objects)
    out.update(custom_objects or {})
    return out


def lookup(name, custom_objects=None):
    """The custom object registered under `name` (None if there is none)."""
    if not isinstance(name, str):
        return None
    return merged(custom_objects).get(name)


class CustomObjectScope(contextlib.ContextDecorator):
    """Makes the given `{name: object}` dicts resolvable by name inside a `with` block."""

    def __init__(self, *args):
        for objects in args:
            if not isinstance(objects, dict):
                raise TypeError(f"CustomObjectScope takes dicts of name -> object, got "
                                f"{objects!r}")
        self.custom_objects = args

    def __enter__(self):
        combined = {}
        for objects in self.custom_objects:
            combined.update(objects)
        _scopes().append(combined)
        return self

    def __exit__(self, *exc):
        _scopes().pop()
        return False


def custom_object_scope(*args):
    """`CustomObjectScope(*args)` (a context manager)."""
    return CustomObjectScope(*args)


def register_keras_serializable(package="Custom", name=None):
    """A decorator registering a class or function as `package>name` (name: its own)."""

    def decorator(arg):
        registered = name if name is not None else arg.__name__
        key = f"{package}>{registered}"
        if inspect.isclass(arg) and not hasattr(arg, "get_config"):
            raise ValueError("Cannot register a class that does not have a get_config() "
                             "method.")
        if key in _GLOBAL_CUSTOM_OBJECTS:
            raise ValueError(f"{key} has already been registered to "
                             f"{_GLOBAL_CUSTOM_OBJECTS[key]}")
        _GLOBAL_CUSTOM_OBJECTS[key] = arg
        _GLOBAL_CUSTOM_NAMES[arg] = key
        return arg

    return decorator


def get_registered_name(obj):
    """The name `obj` was registered under (else its own name)."""
    if obj in _GLOBAL_CUSTOM_NAMES:
        return _GLOBAL_CUSTOM_NAMES[obj]
    return obj.__name__


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The object for `name`: scopes and the registry first, then `custom_objects`, then
    `module_objects` (None if none has it)."""
    found = lookup(name)
    if found is not None:
        return found
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if module_objects and name in module_objects:
        return module_objects[name]
    return None
