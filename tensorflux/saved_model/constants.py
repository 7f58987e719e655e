"""SavedModel directory layout and collection keys (TF's `tf.saved_model.constants`)."""

ASSETS_DIRECTORY = "assets"
ASSETS_KEY = "saved_model_assets"
DEBUG_DIRECTORY = "debug"
DEBUG_INFO_FILENAME_PB = "saved_model_debug_info.pb"
EXTRA_ASSETS_DIRECTORY = "assets.extra"
INIT_OP_SIGNATURE_KEY = "__saved_model_init_op"
LEGACY_INIT_OP_KEY = "legacy_init_op"
MAIN_OP_KEY = "saved_model_main_op"
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
SAVED_MODEL_SCHEMA_VERSION = 1
TRAIN_OP_KEY = "saved_model_train_op"
TRAIN_OP_SIGNATURE_KEY = "__saved_model_train_op"
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"

__all__ = ["ASSETS_DIRECTORY", "ASSETS_KEY", "DEBUG_DIRECTORY", "DEBUG_INFO_FILENAME_PB",
           "EXTRA_ASSETS_DIRECTORY", "INIT_OP_SIGNATURE_KEY", "LEGACY_INIT_OP_KEY", "MAIN_OP_KEY",
           "SAVED_MODEL_FILENAME_PB", "SAVED_MODEL_FILENAME_PBTXT", "SAVED_MODEL_SCHEMA_VERSION",
           "TRAIN_OP_KEY", "TRAIN_OP_SIGNATURE_KEY", "VARIABLES_DIRECTORY", "VARIABLES_FILENAME"]
