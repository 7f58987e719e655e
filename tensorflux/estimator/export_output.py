"""`tf.estimator.export.{ExportOutput, ClassificationOutput, RegressionOutput, PredictOutput}`.

An ExportOutput names the tensors of one serving signature; `as_signature_def(receiver_tensors)`
turns it into the SignatureDef the SavedModel stores. Classification and regression signatures
take one serialized `tf.Example` string tensor as input (TF's rule); a PredictOutput takes any.
"""

from __future__ import annotations

import abc

from tensorflux.framework import dtypes
from tensorflux.framework.graph import Tensor
from tensorflux.saved_model import signature_def_utils

__all__ = ["ExportOutput", "ClassificationOutput", "RegressionOutput", "PredictOutput"]


class ExportOutput(abc.ABC):
    """Base of the outputs a model_fn may export (one serving signature each)."""

    @abc.abstractmethod
    def as_signature_def(self, receiver_tensors):
        ...


def _single_string_input(receiver_tensors, what):
    if isinstance(receiver_tensors, Tensor):
        receiver_tensors = {"input": receiver_tensors}
    if len(receiver_tensors) != 1:
        raise ValueError(f"{what} input must be a single string Tensor; got "
                         f"{receiver_tensors}")
    (tensor,) = receiver_tensors.values()
    if tensor.dtype != dtypes.string:
        raise ValueError(f"{what} input must be a single string Tensor; got "
                         f"{receiver_tensors}")
    return tensor


class ClassificationOutput(ExportOutput):
    """Scores (float32 `[batch, n]`) and/or classes (string `[batch, n]`) of a classifier.

    Raises:
        ValueError: neither is given, or one has the wrong dtype.
    """

    def __init__(self, scores=None, classes=None):
        if scores is not None and not (isinstance(scores, Tensor) and
                                       scores.dtype == dtypes.float32):
            raise ValueError(f"Classification scores must be a float32 Tensor; got {scores}")
        if classes is not None and not (isinstance(classes, Tensor) and
                                        classes.dtype == dtypes.string):
            raise ValueError(f"Classification classes must be a string Tensor; got {classes}")
        if scores is None and classes is None:
            raise ValueError("At least one of scores and classes must be set.")
        self._scores = scores
        self._classes = classes

    @property
    def scores(self):
        return self._scores

    @property
    def classes(self):
        return self._classes

    def as_signature_def(self, receiver_tensors):
        examples = _single_string_input(receiver_tensors, "Classification")
        return signature_def_utils.classification_signature_def(examples, self._classes,
                                                                self._scores)


class RegressionOutput(ExportOutput):
    """The float32 predictions of a regressor.

    Raises:
        ValueError: `value` is not a float32 Tensor.
    """

    def __init__(self, value):
        if not (isinstance(value, Tensor) and value.dtype == dtypes.float32):
            raise ValueError(f"Regression output value must be a float32 Tensor; got {value}")
        self._value = value

    @property
    def value(self):
        return self._value

    def as_signature_def(self, receiver_tensors):
        examples = _single_string_input(receiver_tensors, "Regression")
        return signature_def_utils.regression_signature_def(examples, self._value)


class PredictOutput(ExportOutput):
    """Any named tensors (a single Tensor is named "output").

    Raises:
        ValueError: a key is not a string or a value is not a Tensor.
    """

    def __init__(self, outputs):
        if isinstance(outputs, Tensor):
            outputs = {"output": outputs}
        if not isinstance(outputs, dict) or not outputs:
            raise ValueError(f"Prediction outputs must be a Tensor or a non-empty dict; got "
                             f"{outputs}")
        for key, value in outputs.items():
            if not isinstance(key, str):
                raise ValueError(f"Prediction output key must be a string; got {key}.")
            if not isinstance(value, Tensor):
                raise ValueError(f"Prediction output value must be a Tensor; got {value}.")
        self._outputs = dict(outputs)

    @property
    def outputs(self):
        return self._outputs

    def as_signature_def(self, receiver_tensors):
        if isinstance(receiver_tensors, Tensor):
            receiver_tensors = {"input": receiver_tensors}
        return signature_def_utils.predict_signature_def(receiver_tensors, self._outputs)
