"""`tf.contrib.learn.learn_runner.run`: build an Experiment and run one of its schedules."""

from __future__ import annotations

from tensorflux.contrib.learn.experiment import Experiment
from tensorflux.estimator.model_fn import fn_args

__all__ = ["run"]


def run(experiment_fn, output_dir=None, schedule=None, run_config=None, hparams=None):
    """Runs `schedule` (default "train_and_evaluate") of the Experiment `experiment_fn` makes.

    `experiment_fn(output_dir)` (TF 1.0 style) or `experiment_fn(run_config, hparams)` (TF
    1.2+ style, with `run_config` given).

    Returns:
        What the schedule returns (for "train_and_evaluate": `(eval_result, [])`).

    Raises:
        ValueError: both or neither of output_dir and run_config; experiment_fn not
            returning an Experiment; an unknown or private schedule.
    """
    if (output_dir is None) == (run_config is None):
        raise ValueError("learn_runner.run: give exactly one of output_dir and run_config.")
    if output_dir is not None:
        experiment = experiment_fn(output_dir)
    else:
        args = fn_args(experiment_fn)
        experiment = experiment_fn(run_config, hparams) if len(args) >= 2 else \
            experiment_fn(run_config)
    if not isinstance(experiment, Experiment):
        raise ValueError(f"experiment_fn should return an Experiment; got "
                         f"{type(experiment).__name__}")
    schedule = schedule or "train_and_evaluate"
    method = getattr(experiment, schedule, None) if not schedule.startswith("_") else None
    if not callable(method):
        raise ValueError(f"Schedule references non-existent task {schedule}.")
    return method()
