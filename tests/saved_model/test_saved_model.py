"""tf.saved_model (TF1): builder, loader, simple_save, signatures, assets and main ops."""

import os

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.protos import saved_model_pb2, types_pb2

SERVE = [tf.saved_model.tag_constants.SERVING]


def _model(graph):
    """x -> dense layer y, trained one step; returns (x, y, train_op)."""
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) / 10, name="w")
        b = tf.Variable(np.zeros(2, np.float32), name="b")
        y = tf.nn.relu(tf.matmul(x, w) + b, name="y")
        loss = tf.reduce_mean(tf.square(y - 1.0))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    return x, y, train


BATCH = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], np.float32)


def _train_and_export(export_dir, as_text=False, **builder_kwargs):
    graph = tf.Graph()
    x, y, train = _model(graph)
    with graph.as_default(), tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: BATCH})
        expected = sess.run(y, {x: BATCH})
        signature = tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": y})
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
        builder.add_meta_graph_and_variables(
            sess, SERVE, signature_def_map={"serving_default": signature}, **builder_kwargs)
        path = builder.save(as_text=as_text)
    return expected, path


@pytest.mark.parametrize("as_text", [False, True])
def test_round_trip(tmp_path, as_text):
    export_dir = str(tmp_path / "model")
    expected, path = _train_and_export(export_dir, as_text=as_text)
    name = "saved_model.pbtxt" if as_text else "saved_model.pb"
    assert path == os.path.join(export_dir, name).encode()
    assert sorted(os.listdir(os.path.join(export_dir, "variables"))) == [
        "variables.data-00000-of-00001", "variables.index"]
    assert tf.saved_model.contains_saved_model(export_dir)
    assert tf.saved_model.loader.maybe_saved_model_directory(export_dir)
    with tf.Graph().as_default() as graph, tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, SERVE, export_dir)
        signature = meta.signature_def["serving_default"]
        assert signature.method_name == "tensorflow/serving/predict"
        x_name, y_name = signature.inputs["x"].name, signature.outputs["y"].name
        assert (x_name, y_name) == ("x:0", "y:0")
        got = sess.run(y_name, {x_name: BATCH})
        y = tf.saved_model.utils.get_tensor_from_tensor_info(signature.outputs["y"])
        assert y.graph is graph
    np.testing.assert_array_equal(got, expected)


def test_saved_model_proto_has_tensorflow_field_numbers(tmp_path):
    export_dir = str(tmp_path / "model")
    _train_and_export(export_dir)
    data = open(os.path.join(export_dir, "saved_model.pb"), "rb").read()
    assert data[:2] == b"\x08\x01"  # field 1 (schema version, varint) = 1
    assert data[2] == 0x12  # field 2 (meta_graphs, length-delimited)
    proto = saved_model_pb2.SavedModel.FromString(data)
    assert proto.saved_model_schema_version == 1
    assert list(proto.meta_graphs[0].meta_info_def.tags) == ["serve"]
    assert proto.meta_graphs[0].saver_def.restore_op_name


def test_multiple_meta_graphs_and_tags(tmp_path):
    export_dir = str(tmp_path / "model")
    graph = tf.Graph()
    x, y, train = _model(graph)
    with graph.as_default(), tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run(y, {x: BATCH})
        builder = tf.saved_model.Builder(export_dir)
        with pytest.raises(AssertionError, match="has not been saved yet"):
            builder.add_meta_graph(SERVE)
        builder.add_meta_graph_and_variables(sess, [tf.saved_model.TRAINING])
        with pytest.raises(AssertionError, match="has already been saved"):
            builder.add_meta_graph_and_variables(sess, SERVE)
        builder.add_meta_graph(SERVE, signature_def_map={
            "predict": tf.saved_model.predict_signature_def({"x": x}, {"y": y})})
        builder.save()
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(RuntimeError, match="could not be found in SavedModel"):
            tf.saved_model.load(sess, ["gpu"], export_dir)
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.load(sess, SERVE, export_dir, import_scope="m")
        signature = meta.signature_def["predict"]
        y_loaded = tf.saved_model.get_tensor_from_tensor_info(signature.outputs["y"],
                                                              import_scope="m")
        x_loaded = tf.saved_model.get_tensor_from_tensor_info(signature.inputs["x"],
                                                              import_scope="m")
        assert y_loaded.name == "m/y:0"
        np.testing.assert_array_equal(sess.run(y_loaded, {x_loaded: BATCH}), expected)
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.load(sess, [tf.saved_model.TRAINING], export_dir)
        assert not meta.signature_def
        assert len(tf.global_variables()) == 2


def test_simple_save_with_vocabulary_asset_and_legacy_init_op(tmp_path):
    vocab = tmp_path / "words.txt"
    vocab.write_text("red\ngreen\nblue\n")
    export_dir = str(tmp_path / "export" / "1")
    with tf.Graph().as_default(), tf.Session() as sess:
        words = tf.placeholder(tf.string, [None], name="words")
        table = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(str(vocab), tf.string, -2, tf.int64, -1), -1)
        ids = table.lookup(words)
        scale = tf.Variable(10, dtype=tf.int64, name="scale")
        scaled = tf.identity(ids * scale, name="scaled")
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        sess.run(scale.assign(100))
        init = tf.group(tf.tables_initializer(), name="legacy_init_op")
        tf.saved_model.simple_save(sess, export_dir, {"words": words}, {"ids": scaled},
                                   legacy_init_op=init)
    vocab.unlink()  # the loaded model must read the copy under assets/
    assert os.listdir(os.path.join(export_dir, "assets")) == ["words.txt"]
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, SERVE, export_dir)
        signature = meta.signature_def[tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        got = sess.run(signature.outputs["ids"].name,
                       {signature.inputs["words"].name: ["blue", "pink", "red"]})
    np.testing.assert_array_equal(got, [200, -100, 0])


def test_main_op_and_main_op_with_restore(tmp_path):
    with tf.Graph().as_default(), tf.Session() as sess:
        v = tf.Variable(3.0, name="v")
        local = tf.Variable(0.0, name="counter",
                            collections=[tf.GraphKeys.LOCAL_VARIABLES])
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(["k"], [5], value_dtype=tf.int64), -1)
        op = tf.saved_model.main_op.main_op()
        sess.run(op)
        assert sess.run([v, local, table.lookup(tf.constant(["k"]))[0]]) == [3.0, 0.0, 5]
        saver = tf.train.Saver([v])
        sess.run(v.assign(8.0))
        path = saver.save(sess, str(tmp_path / "ckpt"))
        sess.run(v.assign(1.0))
        restore = tf.saved_model.main_op_with_restore(saver.saver_def.restore_op_name)
        sess.run(restore, {saver.saver_def.filename_tensor_name: path})
        assert sess.run(v) == 8.0


def test_builder_errors(tmp_path):
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "file").write_text("x")
    with pytest.raises(AssertionError, match="isn't empty"):
        tf.saved_model.builder.SavedModelBuilder(str(occupied))
    graph = tf.Graph()
    x, y, _ = _model(graph)
    with graph.as_default(), tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        builder = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "a"))
        empty = tf.saved_model.build_signature_def(
            {"x": tf.saved_model.utils.build_tensor_info(x)},
            {"y": tf.saved_model.build_tensor_info(y)})
        empty.outputs["bad"].name = "y:0"  # no dtype
        with pytest.raises(AssertionError, match="dtype field set"):
            builder.add_meta_graph_and_variables(sess, SERVE, {"s": empty})
        with pytest.raises(TypeError, match="main_op needs to be an Operation"):
            builder.add_meta_graph_and_variables(sess, SERVE, main_op=y)
        with pytest.raises(KeyError, match="reserved"):
            builder.add_meta_graph_and_variables(sess, SERVE, {"__saved_model_init_op": empty})
    with pytest.raises(OSError, match="SavedModel file does not exist"):
        with tf.Graph().as_default(), tf.Session() as sess:
            tf.saved_model.loader.load(sess, SERVE, str(tmp_path / "missing"))


def test_model_without_variables(tmp_path):
    export_dir = str(tmp_path / "consts")
    with tf.Graph().as_default(), tf.Session() as sess:
        a = tf.placeholder(tf.float32, [2], name="a")
        out = tf.multiply(a, 2.0, name="out")
        tf.saved_model.simple_save(sess, export_dir, {"a": a}, {"out": out})
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.saved_model.loader.load(sess, SERVE, export_dir)
        assert sess.run("out:0", {"a:0": [1.0, 4.0]}).tolist() == [2.0, 8.0]


# -- signatures and tensor infos -----------------------------------------------------------------

def test_build_tensor_info_dense_and_sparse():
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        info = tf.saved_model.utils.build_tensor_info(x)
        assert info.name == "x:0" and info.dtype == types_pb2.DT_FLOAT
        assert [d.size for d in info.tensor_shape.dim] == [-1, 3]
        sp = tf.sparse_placeholder(tf.int64, name="sp")
        sparse_info = tf.saved_model.build_tensor_info(sp)
        assert sparse_info.WhichOneof("encoding") == "coo_sparse"
        assert sparse_info.coo_sparse.values_tensor_name == sp.values.name
        back = tf.saved_model.utils.get_tensor_from_tensor_info(sparse_info, graph=graph)
        assert isinstance(back, tf.SparseTensor) and back.values is sp.values
        assert tf.saved_model.get_tensor_from_tensor_info(info) is x
        with pytest.raises(TypeError):
            tf.saved_model.build_tensor_info([1.0])
        with pytest.raises(ValueError, match="Invalid TensorInfo.encoding"):
            tf.saved_model.get_tensor_from_tensor_info(type(info)())


def test_signature_builders_and_validity():
    sc = tf.saved_model.signature_constants
    utils = tf.saved_model.signature_def_utils
    with tf.Graph().as_default():
        examples = tf.placeholder(tf.string, [None], name="examples")
        classes = tf.placeholder(tf.string, [None, 2], name="classes")
        scores = tf.placeholder(tf.float32, [None, 2], name="scores")
        values = tf.placeholder(tf.float32, [None], name="values")
        ints = tf.placeholder(tf.int32, [None], name="ints")
        classify = utils.classification_signature_def(examples, classes, scores)
        assert classify.method_name == sc.CLASSIFY_METHOD_NAME == "tensorflow/serving/classify"
        assert set(classify.outputs) == {"classes", "scores"}
        regress = utils.regression_signature_def(examples, values)
        assert regress.outputs[sc.REGRESS_OUTPUTS].name == "values:0"
        predict = utils.predict_signature_def({"i": ints}, {"o": values})
        assert all(utils.is_valid_signature(s) for s in (classify, regress, predict))
        assert not utils.is_valid_signature(None)
        assert not utils.is_valid_signature(utils.build_signature_def(
            {"inputs": tf.saved_model.build_tensor_info(ints)},
            {"outputs": tf.saved_model.build_tensor_info(values)}, sc.REGRESS_METHOD_NAME))
        with pytest.raises(ValueError, match="Prediction inputs cannot be None or empty"):
            utils.predict_signature_def({}, {"o": values})
        with pytest.raises(ValueError, match="Prediction outputs cannot be None or empty"):
            utils.predict_signature_def({"i": ints}, None)
        with pytest.raises(ValueError, match="examples must be a string Tensor"):
            utils.classification_signature_def(ints, classes, None)
        with pytest.raises(ValueError, match="cannot both be None"):
            utils.classification_signature_def(examples, None, None)
        with pytest.raises(ValueError, match="scores must be a float Tensor"):
            utils.classification_signature_def(examples, None, ints)
        with pytest.raises(ValueError, match="Regression output must be a float Tensor"):
            utils.regression_signature_def(examples, ints)
    assert (tf.saved_model.SERVING, tf.saved_model.TRAINING) == ("serve", "train")
    assert tf.saved_model.MAIN_OP_KEY == "saved_model_main_op"
    assert tf.saved_model.LEGACY_INIT_OP_KEY == "legacy_init_op"
