"""examples/seq2seq_attention.py runs end to end on a small setting: training lowers the loss,
the checkpoint restores into the beam-search graph, and the beams are well-formed."""

import importlib.util
import os

import numpy as np

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples", "seq2seq_attention.py")


def test_seq2seq_attention_example_trains_and_beam_decodes(tmp_path):
    spec = importlib.util.spec_from_file_location("example_seq2seq_attention", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.main(["--steps", "25", "--units", "16", "--eval_size", "8",
                          "--learning_rate", "0.02", "--model_dir", str(tmp_path)])
    losses = result["losses"]
    assert np.mean(losses[-5:]) < 0.8 * np.mean(losses[:5])
    assert result["checkpoint"].endswith("model.ckpt-25")
    best = result["predictions"]
    assert best.shape[0] == 8 and best.shape[1] <= 5 + 2
    assert best.min() >= 0 and best.max() < module.VOCAB
    # After a beam's first EOS everything is EOS (gather_tree's contract).
    for row in best:
        ends = np.flatnonzero(row == module.EOS)
        if len(ends):
            assert np.all(row[ends[0]:] == module.EOS)
    assert 0.0 <= result["accuracy"] <= 1.0
