"""`tf.contrib.tfprof.model_analyzer`: `print_model_analysis` and the option dicts of TF 1.x
programs (`TRAINABLE_VARS_PARAMS_STAT_OPTIONS`, `FLOAT_OPS_OPTIONS`, ...), whose
`dump_to_file` key names a file to write the report to."""

from __future__ import annotations

from tensorflux.profiler.model_analyzer import profile
from tensorflux.profiler.option_builder import ProfileOptionBuilder

__all__ = ["FLOAT_OPS_OPTIONS", "PRINT_ALL_TIMING_MEMORY", "PRINT_PARAMS_ON_DEVICE",
           "TRAINABLE_VARS_PARAMS_STAT_OPTIONS", "print_model_analysis"]

TRAINABLE_VARS_PARAMS_STAT_OPTIONS = dict(
    ProfileOptionBuilder.trainable_variables_parameter(), dump_to_file="")
FLOAT_OPS_OPTIONS = dict(ProfileOptionBuilder.float_operation(), dump_to_file="")
PRINT_PARAMS_ON_DEVICE = dict(ProfileOptionBuilder().build(), max_depth=1, min_params=0,
                              account_type_regexes=[".*"], account_displayed_op_only=False,
                              select=["device", "params"], dump_to_file="")
PRINT_ALL_TIMING_MEMORY = dict(ProfileOptionBuilder.time_and_memory(), dump_to_file="")


def print_model_analysis(graph, run_meta=None, op_log=None, tfprof_cmd="scope",
                         tfprof_options=TRAINABLE_VARS_PARAMS_STAT_OPTIONS):
    """Prints (or, with `dump_to_file`, writes) the profile of `graph` and returns it
    (`GraphNodeProto` for scope/graph, `MultiGraphNodeProto` for op/code)."""
    options = dict(tfprof_options)
    dump_to = options.pop("dump_to_file", "")
    if dump_to:
        options["output"] = f"file:outfile={dump_to}"
    return profile(graph, run_meta=run_meta, op_log=op_log, cmd=tfprof_cmd, options=options)
