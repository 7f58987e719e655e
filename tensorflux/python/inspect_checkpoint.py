"""`tensorflow.python.tools.inspect_checkpoint`: print what a checkpoint holds (names, dtypes
and shapes, or values) and its parameter count. Errors reading the file are printed, as TF 1.x
does, with a hint when a V2 checkpoint was named by one of its files instead of its prefix."""

from __future__ import annotations

import math
import re

import numpy as np

from tensorflux.train.checkpoint_utils import NewCheckpointReader

__all__ = ["print_tensors_in_checkpoint_file"]


def _total_params(reader, count_exclude_pattern="") -> int:
    exclude = re.compile(count_exclude_pattern) if count_exclude_pattern else None
    return sum(math.prod(shape) for name, shape in reader.get_variable_to_shape_map().items()
               if exclude is None or not exclude.search(name))


def print_tensors_in_checkpoint_file(file_name, tensor_name, all_tensors,
                                     all_tensor_names=False, count_exclude_pattern=""):
    """Prints the tensors of checkpoint `file_name`.

    Args:
        file_name: the checkpoint prefix.
        tensor_name: print only this tensor's value ("" for the name/dtype/shape list).
        all_tensors: print every tensor's name and value.
        all_tensor_names: print every tensor's name.
        count_exclude_pattern: a regex of names left out of the parameter count.
    """
    try:
        reader = NewCheckpointReader(file_name)
        if all_tensors or all_tensor_names:
            for key in sorted(reader.get_variable_to_shape_map()):
                print("tensor_name: ", key)
                if all_tensors:
                    print(np.asarray(reader.get_tensor(key)))
        elif not tensor_name:
            print(reader.debug_string().decode("utf-8"))
        else:
            print("tensor_name: ", tensor_name)
            print(np.asarray(reader.get_tensor(tensor_name)))
        print(f"# Total number of params: {_total_params(reader, count_exclude_pattern)}")
    except Exception as e:  # noqa: BLE001 - the tool reports any failure as text, as TF's
        print(str(e))
        if any(suffix in file_name for suffix in (".index", ".meta", ".data")):
            prefix = ".".join(file_name.split(".")[:-1])
            print("A V2 checkpoint is named by its prefix, without the file's '.' and "
                  f"extension. Try: --file_name={prefix}")
