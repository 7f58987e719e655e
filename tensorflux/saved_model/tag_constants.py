"""Standard MetaGraphDef tags (TF's `tf.saved_model.tag_constants`)."""

SERVING = "serve"
TRAINING = "train"
EVAL = "eval"
GPU = "gpu"
TPU = "tpu"

__all__ = ["SERVING", "TRAINING", "EVAL", "GPU", "TPU"]
