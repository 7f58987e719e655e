"""The `tf.estimator.*Hook` names: the `tf.train` session hooks, as TF 1.15 re-exported them."""

from tensorflux.train.basic_session_run_hooks import (
                                                      CheckpointSaverHook,
                                                      CheckpointSaverListener,
                                                      FeedFnHook,
                                                      FinalOpsHook,
                                                      GlobalStepWaiterHook,
                                                      LoggingTensorHook,
                                                      NanLossDuringTrainingError,
                                                      NanTensorHook,
                                                      ProfilerHook,
                                                      StepCounterHook,
                                                      StopAtStepHook,
                                                      SummarySaverHook,
)
from tensorflux.train.session_run_hook import (
                                                      SecondOrStepTimer,
                                                      SessionRunArgs,
                                                      SessionRunContext,
                                                      SessionRunHook,
                                                      SessionRunValues,
)

__all__ = ["CheckpointSaverHook", "CheckpointSaverListener", "FeedFnHook", "FinalOpsHook",
           "GlobalStepWaiterHook", "LoggingTensorHook", "NanLossDuringTrainingError",
           "NanTensorHook", "ProfilerHook", "SecondOrStepTimer", "SessionRunArgs",
           "SessionRunContext", "SessionRunHook", "SessionRunValues", "StepCounterHook",
           "StopAtStepHook", "SummarySaverHook"]
