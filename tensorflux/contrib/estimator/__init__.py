"""`tf.contrib.estimator` (TF 1.15): heads and multi_head, the head-taking canned estimators,
RNNClassifier / RNNEstimator, extenders (add_metrics, forward_features,
clip_gradients_by_norm), early stopping hooks, a one-tower replicate_model_fn,
SavedModelEstimator, the multi-mode export functions and the in-memory boosted trees. The other
TF 1.15 names raise ContribNotProvidedError."""

from tensorflux.contrib import missing as _missing
from tensorflux.contrib.estimator.extenders import (add_metrics, clip_gradients_by_norm,
                                                    forward_features)
from tensorflux.contrib.estimator.heads import (MultiLabelHead, binary_classification_head,
                                                logistic_regression_head, multi_class_head,
                                                multi_label_head, poisson_regression_head,
                                                regression_head)
from tensorflux.contrib.estimator.multi_head import MultiHead, multi_head
from tensorflux.contrib.estimator.rnn import RNNClassifier, RNNEstimator
from tensorflux.contrib.estimator.replicate_model_fn import TowerOptimizer, replicate_model_fn
from tensorflux.estimator.boosted_trees import (
    boosted_trees_classifier_train_in_memory,
    boosted_trees_regressor_train_in_memory,
)
from tensorflux.estimator.canned import (DNNEstimator, DNNLinearCombinedEstimator,
                                         LinearEstimator)
from tensorflux.estimator.early_stopping import (make_early_stopping_hook, read_eval_metrics,
                                                 stop_if_higher_hook, stop_if_lower_hook,
                                                 stop_if_no_decrease_hook,
                                                 stop_if_no_increase_hook)
from tensorflux.estimator.export_modes import (export_all_saved_models,
                                               export_saved_model_for_mode)
from tensorflux.estimator.in_memory_evaluation import InMemoryEvaluatorHook
from tensorflux.estimator.saved_model_estimator import SavedModelEstimator
from tensorflux.estimator.supervised_receiver import (
    build_raw_supervised_input_receiver_fn,
    build_supervised_input_receiver_fn_from_input_fn,
)

__all__ = ["add_metrics", "forward_features", "clip_gradients_by_norm",
           "binary_classification_head", "multi_class_head", "regression_head",
           "poisson_regression_head", "logistic_regression_head", "multi_label_head",
           "MultiLabelHead", "multi_head", "MultiHead", "DNNEstimator", "LinearEstimator",
           "DNNLinearCombinedEstimator", "RNNClassifier", "RNNEstimator",
           "make_early_stopping_hook", "read_eval_metrics", "stop_if_higher_hook",
           "stop_if_lower_hook", "stop_if_no_decrease_hook", "stop_if_no_increase_hook",
           "InMemoryEvaluatorHook", "replicate_model_fn", "TowerOptimizer",
           "SavedModelEstimator", "export_all_saved_models", "export_saved_model_for_mode",
           "build_raw_supervised_input_receiver_fn",
           "build_supervised_input_receiver_fn_from_input_fn",
           "boosted_trees_classifier_train_in_memory",
           "boosted_trees_regressor_train_in_memory"]

__getattr__ = _missing.module_getattr("contrib.estimator", {
    "*": "tf.estimator",
})
