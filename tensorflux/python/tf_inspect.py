"""`tensorflow.python.util.tf_inspect`: Python's `inspect` with the TF1-era names
(`getargspec`, removed from Python 3.11, is rebuilt on `getfullargspec`)."""

from __future__ import annotations

import collections
import inspect
from inspect import (
    getcallargs,
    getdoc,
    getfile,
    getfullargspec,
    getmembers,
    getmodule,
    getmro,
    getsource,
    getsourcefile,
    getsourcelines,
    isbuiltin,
    isclass,
    iscoroutinefunction,
    isframe,
    isfunction,
    isgenerator,
    isgeneratorfunction,
    ismethod,
    ismodule,
    isroutine,
    signature,
    stack,
    unwrap,
)

ArgSpec = collections.namedtuple("ArgSpec", ["args", "varargs", "keywords", "defaults"])
FullArgSpec = inspect.FullArgSpec

__all__ = ["ArgSpec", "FullArgSpec", "getargspec", "getcallargs", "getdoc", "getfile",
           "getfullargspec", "getmembers", "getmodule", "getmro", "getsource",
           "getsourcefile", "getsourcelines", "isbuiltin", "isclass", "iscoroutinefunction",
           "isframe", "isfunction", "isgenerator", "isgeneratorfunction", "ismethod",
           "ismodule", "isroutine", "signature", "stack", "unwrap"]


def getargspec(obj) -> ArgSpec:
    """The TF1 `ArgSpec(args, varargs, keywords, defaults)` of a callable.

    Raises:
        ValueError: if the callable has keyword-only arguments without defaults or
            annotations-only information that `ArgSpec` cannot hold (as `inspect` did).
    """
    spec = getfullargspec(obj)
    if spec.kwonlyargs and not spec.kwonlydefaults:
        raise ValueError("Function has keyword-only arguments or annotations, use "
                         "getfullargspec() API which can support them")
    return ArgSpec(spec.args, spec.varargs, spec.varkw, spec.defaults)
