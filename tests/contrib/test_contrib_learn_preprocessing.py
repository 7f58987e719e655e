"""contrib.learn.preprocessing: VocabularyProcessor ids, trimming, reverse, JSON save/restore
(never pickle), CategoricalVocabulary, the tokenizer."""

import pickle

import numpy as np
import pytest

import tensorflux as tf

pre = tf.contrib.learn.preprocessing


def test_tokenizer_splits_words_capitals_and_apostrophes():
    assert list(pre.tokenizer(["I'm fine, thanks", "HTMLParser x-ray"])) == [
        ["I'm", "fine", "thanks"], ["HTML", "Parser", "x-ray"]]


def test_fit_transform_ids_in_order_of_first_sight_padded_and_truncated():
    docs = ["the cat sat", "the dog", "a cat the dog ran far away"]
    vp = pre.VocabularyProcessor(max_document_length=5)
    ids = np.array(list(vp.fit_transform(docs)))
    vocab = {}
    for doc in docs:
        for word in doc.split():
            vocab.setdefault(word, len(vocab) + 1)
    expected = np.zeros((3, 5), np.int64)
    for row, doc in enumerate(docs):
        words = doc.split()[:5]
        expected[row, :len(words)] = [vocab[w] for w in words]
    np.testing.assert_array_equal(ids, expected)
    assert ids.dtype == np.int64 and len(vp.vocabulary_) == len(vocab) + 1
    # Frozen after fit: unknown words are 0.
    np.testing.assert_array_equal(list(vp.transform(["cat zebra"]))[0], [vocab["cat"], 0, 0,
                                                                            0, 0])
    assert list(vp.reverse([ids[1]])) == ["the dog <UNK> <UNK> <UNK>"]


def test_min_frequency_trims_and_renumbers_by_count():
    vp = pre.VocabularyProcessor(3, min_frequency=1)
    vp.fit(["b a", "a c b", "a d"])  # counts a:3 b:2 c:1 d:1
    assert [vp.vocabulary_.get(w) for w in ["a", "b", "c", "d"]] == [1, 2, 0, 0]
    assert len(vp.vocabulary_) == 3


def test_categorical_vocabulary_trim_max_frequency_and_reverse():
    vocab = pre.CategoricalVocabulary()
    for word, count in [("x", 5), ("y", 2), ("z", 2), ("w", 1)]:
        vocab.add(word, count)
    vocab.trim(min_frequency=1, max_frequency=5)
    assert [vocab.reverse(i) for i in range(len(vocab))] == ["<UNK>", "y", "z"]
    no_rev = pre.CategoricalVocabulary(support_reverse=False)
    with pytest.raises(ValueError, match="support_reverse"):
        no_rev.reverse(0)


def test_save_restore_json_round_trip_and_pickle_refused(tmp_path):
    vp = pre.VocabularyProcessor(4)
    vp.fit(["hello world", "hello there"])
    path = str(tmp_path / "vocab")
    vp.save(path)
    restored = pre.VocabularyProcessor.restore(path)
    docs = ["world hello there unknown", "there"]
    np.testing.assert_array_equal(list(restored.transform(docs)), list(vp.transform(docs)))
    assert restored.max_document_length == 4
    assert len(restored.vocabulary_) == len(vp.vocabulary_)
    bad = tmp_path / "pickled"
    bad.write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(ValueError, match="not a tensorflux VocabularyProcessor"):
        pre.VocabularyProcessor.restore(str(bad))
    with pytest.raises(ValueError, match="max_document_length"):
        pre.VocabularyProcessor(0)


def test_byte_processor_pads_truncates_and_reverses():
    bp = pre.ByteProcessor(4)
    out = list(bp.fit_transform(["ab", "héllo"]))
    np.testing.assert_array_equal(out[0], [97, 98, 0, 0])
    np.testing.assert_array_equal(out[1], list("héllo".encode())[:4])
    assert out[0].dtype == np.uint8
    assert list(bp.reverse([out[0]])) == ["ab"]


def test_categorical_processor_per_column_shared_and_nan():
    rows = [["red", "s"], ["blue", "m"], ["red", float("nan")]]
    cp = pre.CategoricalProcessor()
    ids = np.array(list(cp.fit_transform(rows)))
    np.testing.assert_array_equal(ids, [[1, 1], [2, 2], [1, 0]])
    np.testing.assert_array_equal(list(cp.transform([["green", "m"]])), [[0, 2]])
    shared = pre.CategoricalProcessor(share=True)
    np.testing.assert_array_equal(list(shared.fit_transform([["a", "b"], ["b", "c"]])),
                                  [[1, 2], [2, 3]])
    trimmed = pre.CategoricalProcessor(min_frequency=1)
    np.testing.assert_array_equal(list(trimmed.fit_transform([["x"], ["x"], ["y"]])),
                                  [[1], [1], [0]])
    with pytest.raises(ValueError, match="not fitted"):
        list(cp.transform([["red", "s", "extra"]]))
