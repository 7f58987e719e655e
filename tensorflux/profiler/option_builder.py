"""`tf.profiler.ProfileOptionBuilder`: the options dict `tf.profiler.profile` takes, with TF1's
defaults and its three ready-made option sets (parameters, float operations, time and
memory)."""

from __future__ import annotations

import copy

TRAINABLE_VARIABLES = "_trainable_variables"

_DEFAULTS = {
    "max_depth": 100, "min_bytes": 0, "min_peak_bytes": 0, "min_residual_bytes": 0,
    "min_output_bytes": 0, "min_micros": 0, "min_accelerator_micros": 0, "min_cpu_micros": 0,
    "min_params": 0, "min_float_ops": 0, "min_occurrence": 0, "order_by": "name",
    "account_type_regexes": [".*"], "start_name_regexes": [".*"], "trim_name_regexes": [],
    "show_name_regexes": [".*"], "hide_name_regexes": [], "account_displayed_op_only": False,
    "select": ["micros"], "step": -1, "output": "stdout",
}


def _options(**changes) -> dict:
    options = copy.deepcopy(_DEFAULTS)
    options.update(changes)
    return options


class ProfileOptionBuilder:
    """Builds profiler options: start from defaults or a given dict, chain `with_*` calls,
    then `build()`."""

    def __init__(self, options=None):
        self._options = copy.deepcopy(options) if options is not None else _options()

    @staticmethod
    def trainable_variables_parameter() -> dict:
        """Counts the parameters of trainable variables, by name scope."""
        return _options(max_depth=10000, account_type_regexes=[TRAINABLE_VARIABLES],
                        account_displayed_op_only=True, select=["params"])

    @staticmethod
    def float_operation() -> dict:
        """Counts the float operations of the ops with a registered "flops" statistic."""
        return _options(max_depth=10000, min_float_ops=1, order_by="float_ops",
                        account_displayed_op_only=True, select=["float_ops"])

    @staticmethod
    def time_and_memory(min_micros=1, min_bytes=1, min_accelerator_micros=0,
                        min_cpu_micros=0, min_peak_bytes=0, min_residual_bytes=0,
                        min_output_bytes=0) -> dict:
        """Shows ops by execution time and memory (needs `run_meta` from a traced run)."""
        return _options(max_depth=10000, min_bytes=min_bytes, min_peak_bytes=min_peak_bytes,
                        min_residual_bytes=min_residual_bytes,
                        min_output_bytes=min_output_bytes, min_micros=min_micros,
                        min_accelerator_micros=min_accelerator_micros,
                        min_cpu_micros=min_cpu_micros, order_by="micros",
                        account_displayed_op_only=True, select=["micros", "bytes"])

    def build(self) -> dict:
        """The options dict."""
        return copy.deepcopy(self._options)

    def with_max_depth(self, max_depth):
        self._options["max_depth"] = max_depth
        return self

    def with_min_memory(self, min_bytes=0, min_peak_bytes=0, min_residual_bytes=0,
                        min_output_bytes=0):
        self._options.update(min_bytes=min_bytes, min_peak_bytes=min_peak_bytes,
                             min_residual_bytes=min_residual_bytes,
                             min_output_bytes=min_output_bytes)
        return self

    def with_min_execution_time(self, min_micros=0, min_accelerator_micros=0,
                                min_cpu_micros=0):
        self._options.update(min_micros=min_micros,
                             min_accelerator_micros=min_accelerator_micros,
                             min_cpu_micros=min_cpu_micros)
        return self

    def with_min_parameters(self, min_params):
        self._options["min_params"] = min_params
        return self

    def with_min_occurrence(self, min_occurrence):
        self._options["min_occurrence"] = min_occurrence
        return self

    def with_min_float_operations(self, min_float_ops):
        self._options["min_float_ops"] = min_float_ops
        return self

    def with_accounted_types(self, account_type_regexes):
        self._options["account_type_regexes"] = copy.copy(account_type_regexes)
        return self

    def with_node_names(self, start_name_regexes=None, show_name_regexes=None,
                        hide_name_regexes=None, trim_name_regexes=None):
        for key, value in (("start_name_regexes", start_name_regexes),
                           ("show_name_regexes", show_name_regexes),
                           ("hide_name_regexes", hide_name_regexes),
                           ("trim_name_regexes", trim_name_regexes)):
            if value is not None:
                self._options[key] = copy.copy(value)
        return self

    def account_displayed_op_only(self, is_true):
        self._options["account_displayed_op_only"] = is_true
        return self

    def with_empty_output(self):
        self._options["output"] = "none"
        return self

    def with_stdout_output(self):
        self._options["output"] = "stdout"
        return self

    def with_file_output(self, outfile):
        self._options["output"] = f"file:outfile={outfile}"
        return self

    def with_timeline_output(self, timeline_file):
        self._options["output"] = f"timeline:outfile={timeline_file}"
        return self

    def with_pprof_output(self, pprof_file):
        self._options["output"] = f"pprof:outfile={pprof_file}"
        return self

    def order_by(self, attribute):
        self._options["order_by"] = attribute
        return self

    def select(self, attributes):
        self._options["select"] = copy.copy(attributes)
        return self

    def with_step(self, step):
        self._options["step"] = step
        return self
