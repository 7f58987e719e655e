"""The Estimator examples run locally on small settings and pass their own checks (the
TF_CONFIG cluster run of the custom model_fn example is test_tf_config_cluster.py)."""

import importlib.util
import os

import numpy as np

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples")


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}",
                                                  os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_custom_model_fn_example_locally(tmp_path, monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    module = load("estimator_custom_model_fn")
    result = module.main(["--model_dir", str(tmp_path), "--max_steps", "150"])
    assert result["metrics"]["global_step"] == 150 and result["metrics"]["rmse"] < 0.01
    x, y = module.make_data(128, seed=1)
    np.testing.assert_allclose(result["served"], y[:5], atol=0.05)


def test_dnn_classifier_example(tmp_path, monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    module = load("estimator_dnn_classifier")
    result = module.main(["--model_dir", str(tmp_path), "--max_steps", "250"])
    assert result["metrics"]["accuracy"] > 0.9
    np.testing.assert_allclose(result["served"], result["expected"], atol=1e-5)
