"""`tf.lite` (TF 1.15): converting a model to the TensorFlow Lite flatbuffer format and
running it need TensorFlow Lite, which tensorflux does not include. The converter classes
exist so programs fail where they convert, with a NotImplementedError saying so, not at
import."""

from __future__ import annotations

__all__ = ["TFLiteConverter", "TocoConverter", "Interpreter", "OpsSet", "Optimize",
           "RepresentativeDataset", "TargetSpec", "constants"]

_MESSAGE = ("TensorFlow Lite conversion is not provided by tensorflux: export a SavedModel "
            "(tf.saved_model / Estimator.export_saved_model) and convert it with TensorFlow's "
            "converter.")


class TFLiteConverter:
    """Holds the converter settings; `convert()` raises NotImplementedError."""

    def __init__(self, graph_def=None, input_tensors=None, output_tensors=None, **kwargs):
        self.graph_def, self.input_tensors, self.output_tensors = (graph_def, input_tensors,
                                                                   output_tensors)
        self.optimizations, self.target_ops = [], None
        self.inference_type = None
        self.representative_dataset = None
        for key, value in kwargs.items():
            setattr(self, key, value)

    @classmethod
    def from_session(cls, sess, input_tensors, output_tensors):
        return cls(sess.graph.as_graph_def(), input_tensors, output_tensors)

    @classmethod
    def from_frozen_graph(cls, graph_def_file, input_arrays, output_arrays,
                          input_shapes=None):
        return cls(graph_def_file, input_arrays, output_arrays)

    @classmethod
    def from_saved_model(cls, saved_model_dir, input_arrays=None, input_shapes=None,
                         output_arrays=None, tag_set=None, signature_key=None):
        return cls(saved_model_dir, input_arrays, output_arrays)

    @classmethod
    def from_keras_model_file(cls, model_file, input_arrays=None, input_shapes=None,
                              output_arrays=None, custom_objects=None):
        return cls(model_file, input_arrays, output_arrays)

    def convert(self):
        raise NotImplementedError(_MESSAGE)


TocoConverter = TFLiteConverter


class Interpreter:
    """Raises NotImplementedError: running .tflite models needs TensorFlow Lite."""

    def __init__(self, model_path=None, model_content=None, experimental_delegates=None):
        raise NotImplementedError("tf.lite.Interpreter: running TensorFlow Lite models is not "
                                  "provided by tensorflux.")


class OpsSet:
    TFLITE_BUILTINS = "TFLITE_BUILTINS"
    SELECT_TF_OPS = "SELECT_TF_OPS"
    TFLITE_BUILTINS_INT8 = "TFLITE_BUILTINS_INT8"


class Optimize:
    DEFAULT = "DEFAULT"
    OPTIMIZE_FOR_SIZE = "OPTIMIZE_FOR_SIZE"
    OPTIMIZE_FOR_LATENCY = "OPTIMIZE_FOR_LATENCY"


class RepresentativeDataset:
    def __init__(self, input_gen):
        self.input_gen = input_gen


class TargetSpec:
    def __init__(self, supported_ops=None):
        self.supported_ops = supported_ops or {OpsSet.TFLITE_BUILTINS}


class constants:  # noqa: N801 - TF's name
    FLOAT = "FLOAT"
    INT8 = "INT8"
    QUANTIZED_UINT8 = "QUANTIZED_UINT8"
    TFLITE = "TFLITE"
    GRAPHVIZ_DOT = "GRAPHVIZ_DOT"
