"""`tf.saved_model` (TF1): SavedModelBuilder, loader.load, simple_save, signatures, tags."""

from tensorflux.saved_model import (builder, constants, loader, main_op, signature_constants,
                                    signature_def_utils, tag_constants, utils)
from tensorflux.saved_model.builder import SavedModelBuilder as Builder
from tensorflux.saved_model.constants import (ASSETS_DIRECTORY, ASSETS_KEY, DEBUG_DIRECTORY,
                                              DEBUG_INFO_FILENAME_PB, LEGACY_INIT_OP_KEY,
                                              MAIN_OP_KEY, SAVED_MODEL_FILENAME_PB,
                                              SAVED_MODEL_FILENAME_PBTXT,
                                              SAVED_MODEL_SCHEMA_VERSION, VARIABLES_DIRECTORY,
                                              VARIABLES_FILENAME)
from tensorflux.saved_model.loader import contains_saved_model, load, maybe_saved_model_directory
from tensorflux.saved_model.main_op import main_op_with_restore
from tensorflux.saved_model.signature_constants import (
    CLASSIFY_INPUTS, CLASSIFY_METHOD_NAME, CLASSIFY_OUTPUT_CLASSES, CLASSIFY_OUTPUT_SCORES,
    DEFAULT_SERVING_SIGNATURE_DEF_KEY, PREDICT_INPUTS, PREDICT_METHOD_NAME, PREDICT_OUTPUTS,
    REGRESS_INPUTS, REGRESS_METHOD_NAME, REGRESS_OUTPUTS)
from tensorflux.saved_model.signature_def_utils import (build_signature_def,
                                                        classification_signature_def,
                                                        is_valid_signature,
                                                        predict_signature_def,
                                                        regression_signature_def)
from tensorflux.saved_model.simple_save import simple_save
from tensorflux.saved_model.tag_constants import GPU, SERVING, TPU, TRAINING
from tensorflux.saved_model.utils import build_tensor_info, get_tensor_from_tensor_info
