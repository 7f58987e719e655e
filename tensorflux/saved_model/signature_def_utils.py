"""SignatureDef builders and checks (TF's `tf.saved_model.signature_def_utils`)."""

from __future__ import annotations

from tensorflux.framework.tensor import Tensor
from tensorflux.protos import meta_graph_pb2, types_pb2
from tensorflux.saved_model import signature_constants as sc
from tensorflux.saved_model.utils import build_tensor_info

__all__ = ["build_signature_def", "predict_signature_def", "classification_signature_def",
           "regression_signature_def", "is_valid_signature"]


def build_signature_def(inputs=None, outputs=None, method_name=None):
    """A SignatureDef from {key: TensorInfo} maps and a method name.

    Example:
        >>> sig = tf.saved_model.signature_def_utils.build_signature_def(
        ...     {"x": tf.saved_model.utils.build_tensor_info(x)},
        ...     {"y": tf.saved_model.utils.build_tensor_info(y)},
        ...     tf.saved_model.signature_constants.PREDICT_METHOD_NAME)
    """
    signature = meta_graph_pb2.SignatureDef()
    for key, info in (inputs or {}).items():
        signature.inputs[key].CopyFrom(info)
    for key, info in (outputs or {}).items():
        signature.outputs[key].CopyFrom(info)
    if method_name is not None:
        signature.method_name = method_name
    return signature


def predict_signature_def(inputs, outputs):
    """A predict SignatureDef from {key: Tensor} inputs and outputs.

    Raises:
        ValueError: `inputs` or `outputs` is None or empty.
    """
    if not inputs:
        raise ValueError("Prediction inputs cannot be None or empty.")
    if not outputs:
        raise ValueError("Prediction outputs cannot be None or empty.")
    return build_signature_def({k: build_tensor_info(t) for k, t in inputs.items()},
                               {k: build_tensor_info(t) for k, t in outputs.items()},
                               sc.PREDICT_METHOD_NAME)


def _checked_info(tensor, dtype_enum, message):
    info = build_tensor_info(tensor)
    if info.dtype != dtype_enum:
        raise ValueError(message)
    return info


def classification_signature_def(examples, classes, scores):
    """A classify SignatureDef: string `examples` in; string `classes` and/or float `scores`.

    Raises:
        ValueError: a missing or wrongly typed tensor (as TensorFlow words it).
    """
    if examples is None:
        raise ValueError("Classification examples cannot be None.")
    if not isinstance(examples, Tensor):
        raise ValueError("Classification examples must be a string Tensor.")
    if classes is None and scores is None:
        raise ValueError("Classification classes and scores cannot both be None.")
    inputs = {sc.CLASSIFY_INPUTS: _checked_info(
        examples, types_pb2.DT_STRING, "Classification examples must be a string Tensor.")}
    outputs = {}
    if classes is not None:
        outputs[sc.CLASSIFY_OUTPUT_CLASSES] = _checked_info(
            classes, types_pb2.DT_STRING, "Classification classes must be a string Tensor.")
    if scores is not None:
        outputs[sc.CLASSIFY_OUTPUT_SCORES] = _checked_info(
            scores, types_pb2.DT_FLOAT, "Classification scores must be a float Tensor.")
    return build_signature_def(inputs, outputs, sc.CLASSIFY_METHOD_NAME)


def regression_signature_def(examples, predictions):
    """A regress SignatureDef: string `examples` in, float `predictions` out.

    Raises:
        ValueError: a missing or wrongly typed tensor.
    """
    if examples is None:
        raise ValueError("Regression examples cannot be None.")
    if not isinstance(examples, Tensor):
        raise ValueError("Regression examples must be a string Tensor.")
    if predictions is None:
        raise ValueError("Regression predictions cannot be None.")
    inputs = {sc.REGRESS_INPUTS: _checked_info(
        examples, types_pb2.DT_STRING, "Regression examples must be a string Tensor.")}
    outputs = {sc.REGRESS_OUTPUTS: _checked_info(
        predictions, types_pb2.DT_FLOAT, "Regression output must be a float Tensor.")}
    return build_signature_def(inputs, outputs, sc.REGRESS_METHOD_NAME)


def _is_valid_predict(signature) -> bool:
    return (signature.method_name == sc.PREDICT_METHOD_NAME and bool(signature.inputs)
            and bool(signature.outputs))


def _is_valid_classify(signature) -> bool:
    if signature.method_name != sc.CLASSIFY_METHOD_NAME:
        return False
    if set(signature.inputs) != {sc.CLASSIFY_INPUTS}:
        return False
    if signature.inputs[sc.CLASSIFY_INPUTS].dtype != types_pb2.DT_STRING:
        return False
    outputs = set(signature.outputs)
    if not outputs or not outputs <= {sc.CLASSIFY_OUTPUT_CLASSES, sc.CLASSIFY_OUTPUT_SCORES}:
        return False
    if sc.CLASSIFY_OUTPUT_CLASSES in outputs and \
            signature.outputs[sc.CLASSIFY_OUTPUT_CLASSES].dtype != types_pb2.DT_STRING:
        return False
    return sc.CLASSIFY_OUTPUT_SCORES not in outputs or \
        signature.outputs[sc.CLASSIFY_OUTPUT_SCORES].dtype == types_pb2.DT_FLOAT


def _is_valid_regress(signature) -> bool:
    return (signature.method_name == sc.REGRESS_METHOD_NAME
            and set(signature.inputs) == {sc.REGRESS_INPUTS}
            and signature.inputs[sc.REGRESS_INPUTS].dtype == types_pb2.DT_STRING
            and set(signature.outputs) == {sc.REGRESS_OUTPUTS}
            and signature.outputs[sc.REGRESS_OUTPUTS].dtype == types_pb2.DT_FLOAT)


def is_valid_signature(signature_def) -> bool:
    """True for a well-formed predict, classify or regress SignatureDef."""
    if signature_def is None:
        return False
    return (_is_valid_classify(signature_def) or _is_valid_regress(signature_def)
            or _is_valid_predict(signature_def))
