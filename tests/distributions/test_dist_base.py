"""tf.distributions: the Distribution base class, names, shapes, sampling, errors, KL registry."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors

tfd = tf.distributions


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def test_namespace_exports():
    for name in ["Bernoulli", "Beta", "Categorical", "Dirichlet", "DirichletMultinomial",
                 "Distribution", "Exponential", "FULLY_REPARAMETERIZED", "Gamma", "Laplace",
                 "Multinomial", "NOT_REPARAMETERIZED", "Normal", "RegisterKL",
                 "ReparameterizationType", "StudentT", "Uniform", "kl_divergence"]:
        assert hasattr(tfd, name), name


def test_reparameterization_types():
    assert repr(tfd.FULLY_REPARAMETERIZED) == "<Reparameterization Type: FULLY_REPARAMETERIZED>"
    assert tfd.FULLY_REPARAMETERIZED != tfd.NOT_REPARAMETERIZED
    expected = {tfd.Normal(0.0, 1.0): tfd.FULLY_REPARAMETERIZED,
                tfd.Uniform(): tfd.FULLY_REPARAMETERIZED,
                tfd.Gamma(1.0, 1.0): tfd.FULLY_REPARAMETERIZED,
                tfd.Exponential(1.0): tfd.FULLY_REPARAMETERIZED,
                tfd.Beta(1.0, 1.0): tfd.FULLY_REPARAMETERIZED,
                tfd.Dirichlet([1.0, 1.0]): tfd.FULLY_REPARAMETERIZED,
                tfd.Laplace(0.0, 1.0): tfd.FULLY_REPARAMETERIZED,
                tfd.StudentT(3.0, 0.0, 1.0): tfd.FULLY_REPARAMETERIZED,
                tfd.Bernoulli(probs=0.3): tfd.NOT_REPARAMETERIZED,
                tfd.Categorical(logits=[0.0, 1.0]): tfd.NOT_REPARAMETERIZED,
                tfd.Multinomial(3.0, probs=[0.5, 0.5]): tfd.NOT_REPARAMETERIZED,
                tfd.DirichletMultinomial(3.0, [1.0, 1.0]): tfd.NOT_REPARAMETERIZED}
    for dist, rep in expected.items():
        assert dist.reparameterization_type is rep, type(dist).__name__
        assert isinstance(dist, tfd.Distribution)


def test_names_scopes_and_parameters():
    n = tfd.Normal(loc=0.0, scale=[1.0, 2.0])
    assert n.name == "Normal/"
    assert n.loc.name == "Normal/loc:0"
    assert n.log_prob(1.0).name.startswith("Normal/log_prob/")
    assert n.sample(seed=1).name.startswith("Normal/sample/")
    assert tfd.Normal(0.0, 1.0).name == "Normal_1/"
    assert tfd.Normal(0.0, 1.0, name="q").name == "q/"
    assert n.parameters == {"loc": 0.0, "scale": [1.0, 2.0], "validate_args": False,
                            "allow_nan_stats": True, "name": "Normal"}
    assert n.dtype == tf.float32 and n.allow_nan_stats and not n.validate_args
    assert set(n.graph_parents) == {n.loc, n.scale}
    e = tfd.Exponential(2.0)
    assert e.name == "Exponential/" and sorted(e.parameters) == [
        "allow_nan_stats", "name", "rate", "validate_args"]
    assert str(n) == ('tf.distributions.Normal("Normal/", batch_shape=(2,), event_shape=(), '
                      'dtype=float32)')
    assert repr(n) == ("<tf.distributions.Normal 'Normal/' batch_shape=(2,) event_shape=() "
                       "dtype=float32>")


def test_copy_overrides_parameters():
    n = tfd.Normal(loc=1.0, scale=2.0)
    m = n.copy(scale=5.0)
    assert isinstance(m, tfd.Normal)
    np.testing.assert_allclose(_run([m.loc, m.scale]), [1.0, 5.0])


def test_batch_and_event_shapes():
    d = tfd.Dirichlet(np.ones([4, 3], np.float32))
    assert d.batch_shape.as_list() == [4] and d.event_shape.as_list() == [3]
    c = tfd.Categorical(logits=np.zeros([2, 5, 7], np.float32))
    assert c.batch_shape.as_list() == [2, 5] and c.event_shape.as_list() == []
    m = tfd.Multinomial(total_count=[2.0, 3.0], logits=np.zeros([1, 4], np.float32))
    assert m.batch_shape.as_list() == [2] and m.event_shape.as_list() == [4]
    p = tf.placeholder(tf.float32, [None, 3])
    dp = tfd.Normal(p, 1.0)
    assert dp.batch_shape.as_list() == [None, 3]
    bst, est = _run([dp.batch_shape_tensor(), dp.event_shape_tensor()],
                    {p: np.zeros([5, 3])})
    np.testing.assert_array_equal(bst, [5, 3])
    assert est.shape == (0,) and est.dtype == np.int32
    np.testing.assert_array_equal(_run(d.event_shape_tensor()), [3])
    assert _run(d.is_scalar_batch()) == np.False_ and _run(c.is_scalar_event())


@pytest.mark.parametrize("sample_shape,expected", [((), [2]), (5, [5, 2]), ([3, 4], [3, 4, 2]),
                                                   ([1], [1, 2])])
def test_sample_shapes(sample_shape, expected):
    n = tfd.Normal([0.0, 1.0], 1.0)
    s = n.sample(sample_shape, seed=3)
    assert s.shape.as_list() == expected
    assert _run(s).shape == tuple(expected)


def test_sample_shape_tensor_and_placeholder():
    k = tf.placeholder(tf.int32, [])
    s = tfd.Normal(0.0, [1.0, 2.0, 3.0]).sample(k, seed=1)
    assert s.shape.as_list() == [None, 3]
    assert _run(s, {k: 4}).shape == (4, 3)
    s2 = tfd.Dirichlet([[1.0, 2.0]]).sample(tf.constant([2, 3]), seed=2)
    assert s2.shape.as_list() == [2, 3, 1, 2]


def test_seeds_are_reproducible_across_sessions():
    tf.set_random_seed(7)
    s = tfd.Normal(0.0, 1.0).sample(4, seed=11)
    g = tfd.Gamma(2.0, 1.0).sample(4, seed=11)
    first = _run([s, g])
    second = _run([s, g])
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    with tf.Session() as sess:
        a, b = sess.run(s), sess.run(s)
    assert not np.array_equal(a, b)


def test_missing_methods_raise_not_implemented():
    c = tfd.Categorical(logits=[0.0, 1.0])
    with pytest.raises(NotImplementedError, match="mean is not implemented: Categorical"):
        c.mean()
    with pytest.raises(NotImplementedError, match="covariance is not implemented: Normal"):
        tfd.Normal(0.0, 1.0).covariance()
    with pytest.raises(NotImplementedError, match="mode is not implemented: Uniform"):
        tfd.Uniform().mode()


def test_fallbacks_between_methods():
    n = tfd.Normal(1.0, 2.0)
    lp, p, v, sd, sf, lsf = _run([n.log_prob(0.5), n.prob(0.5), n.variance(), n.stddev(),
                                  n.survival_function(2.0), n.log_survival_function(2.0)])
    np.testing.assert_allclose(p, np.exp(lp), rtol=1e-6)
    np.testing.assert_allclose(v, 4.0)
    np.testing.assert_allclose(sd, 2.0)
    np.testing.assert_allclose(np.log(sf), lsf, rtol=1e-5)
    u = tfd.Uniform(0.0, 4.0)
    lp, sf, lsf = _run([u.log_prob(1.0), u.survival_function(1.0),
                        u.log_survival_function(1.0)])
    np.testing.assert_allclose([lp, sf, lsf], [np.log(0.25), 0.75, np.log(0.75)], rtol=1e-6)
    e = tfd.Exponential(2.0)
    np.testing.assert_allclose(_run([e.survival_function(1.0), e.log_cdf(1.0)]),
                               [np.exp(-2.0), np.log1p(-np.exp(-2.0))], rtol=1e-6)


def test_constructor_errors():
    with pytest.raises(ValueError, match="Must pass probs or logits, but not both"):
        tfd.Bernoulli(logits=0.0, probs=0.5)
    with pytest.raises(ValueError, match="Must pass probs or logits"):
        tfd.Categorical()
    with pytest.raises(ValueError, match="must be of the same type"):
        tfd.Normal(tf.constant(0.0, tf.float64), tf.constant(1.0, tf.float32))
    with pytest.raises(ValueError, match="floating"):
        tfd.Normal(tf.constant(0), tf.constant(1))


def test_validate_args_asserts_at_run_time():
    with pytest.raises(errors.InvalidArgumentError):
        _run(tfd.Normal(0.0, -1.0, validate_args=True).mean())
    with pytest.raises(errors.InvalidArgumentError, match="low >= high"):
        _run(tfd.Uniform(2.0, 1.0, validate_args=True).mean())
    with pytest.raises(errors.InvalidArgumentError):
        _run(tfd.Bernoulli(probs=1.5, validate_args=True).mean())
    with pytest.raises(errors.InvalidArgumentError):
        _run(tfd.Gamma(1.0, 1.0, validate_args=True).log_prob(-1.0))
    with pytest.raises(errors.InvalidArgumentError, match="sample must be less than"):
        _run(tfd.Beta(1.0, 1.0, validate_args=True).log_prob(1.5))
    with pytest.raises(errors.InvalidArgumentError, match="sum to `1`"):
        _run(tfd.Dirichlet([1.0, 1.0], validate_args=True).log_prob([0.3, 0.3]))
    with pytest.raises(errors.InvalidArgumentError, match="total_count"):
        _run(tfd.Multinomial(3.0, probs=[0.5, 0.5], validate_args=True).log_prob([1.0, 1.0]))
    with pytest.raises(errors.InvalidArgumentError):
        _run(tfd.Categorical(probs=[0.3, 0.3], validate_args=True).entropy())
    ok = tfd.Normal(0.0, 2.0, validate_args=True)
    assert _run(ok.stddev()) == 2.0


def test_allow_nan_stats_false_asserts():
    with pytest.raises(errors.InvalidArgumentError, match="mode not defined"):
        _run(tfd.Gamma(0.5, 1.0, allow_nan_stats=False).mode())
    with pytest.raises(errors.InvalidArgumentError, match="variance not defined"):
        _run(tfd.StudentT(0.5, 0.0, 1.0, allow_nan_stats=False).variance())
    with pytest.raises(errors.InvalidArgumentError, match="Mode undefined"):
        _run(tfd.Beta(0.5, 2.0, allow_nan_stats=False).mode())
    assert _run(tfd.Gamma(3.0, 2.0, allow_nan_stats=False).mode()) == 1.0
    assert np.isnan(_run(tfd.Gamma(0.5, 1.0).mode()))


def test_param_shapes():
    shapes = tfd.Normal.param_shapes([2, 3])
    np.testing.assert_array_equal(_run(shapes["loc"]), [2, 3])
    static = tfd.Normal.param_static_shapes(tf.TensorShape([4]))
    assert static["scale"].as_list() == [4]
    assert sorted(tfd.Gamma.param_shapes([1])) == ["concentration", "rate"]


class _Mine(tfd.Normal):
    pass


def test_register_kl_and_lookup_by_class_hierarchy():
    with pytest.raises(ValueError, match="already been registered"):
        tfd.RegisterKL(tfd.Normal, tfd.Normal)(lambda a, b, name=None: None)
    with pytest.raises(TypeError):
        tfd.RegisterKL("Normal", tfd.Normal)(lambda a, b, name=None: None)
    with pytest.raises(NotImplementedError, match="No KL"):
        tfd.kl_divergence(tfd.Normal(0.0, 1.0), tfd.Laplace(0.0, 1.0))
    # a subclass inherits its parent's pair ...
    kl = tfd.kl_divergence(_Mine(0.0, 1.0), tfd.Normal(1.0, 1.0))
    np.testing.assert_allclose(_run(kl), 0.5, rtol=1e-6)

    # ... until it registers its own, which then wins.
    @tfd.RegisterKL(_Mine, tfd.Normal)
    def _kl_mine(a, b, name=None):
        return tf.constant(42.0)

    assert _run(tfd.kl_divergence(_Mine(0.0, 1.0), tfd.Normal(1.0, 1.0))) == 42.0
    assert _run(_Mine(0.0, 1.0).kl_divergence(tfd.Normal(1.0, 1.0))) == 42.0


def test_kl_allow_nan_stats_false_checks_for_nan():
    a = tfd.Normal(0.0, tf.constant(np.nan, tf.float32))
    b = tfd.Normal(0.0, 1.0)
    assert np.isnan(_run(tfd.kl_divergence(a, b)))
    with pytest.raises(errors.InvalidArgumentError, match="returned NaN values"):
        _run(tfd.kl_divergence(a, b, allow_nan_stats=False))
    assert _run(tfd.kl_divergence(b, b, allow_nan_stats=False)) == 0.0


def test_cross_entropy():
    a, b = tfd.Normal(0.0, 1.0), tfd.Normal(1.0, 2.0)
    expected = 0.5 * np.log(2 * np.pi * 4.0) + (1.0 + 1.0) / (2 * 4.0)
    np.testing.assert_allclose(_run(a.cross_entropy(b)), expected, rtol=1e-6)


class _Coin(tfd.Distribution):
    """A user-defined distribution: only _batch_shape, _sample_n and _prob."""

    def __init__(self, p, name="Coin"):
        parameters = dict(locals())
        with tf.name_scope(name) as name:
            self._p = tf.convert_to_tensor(p, name="p")
        super().__init__(dtype=tf.float32, reparameterization_type=tfd.NOT_REPARAMETERIZED,
                         validate_args=False, allow_nan_stats=True, parameters=parameters,
                         graph_parents=[self._p], name=name)

    def _batch_shape(self):
        return self._p.shape

    def _batch_shape_tensor(self):
        return tf.shape(self._p)

    def _sample_n(self, n, seed=None):
        shape = tf.concat([[n], tf.shape(self._p)], 0)
        return tf.cast(tf.random_uniform(shape, seed=seed) < self._p, tf.float32)

    def _prob(self, x):
        return x * self._p + (1.0 - x) * (1.0 - self._p)

    def _mean(self):
        return self._p


def test_user_defined_subclass_gets_fallbacks():
    coin = _Coin([0.25, 0.5])
    assert coin.name == "Coin/" and coin.batch_shape.as_list() == [2]
    assert tf.compat.v1.distributions.Distribution is tfd.Distribution
    s = coin.sample([3], seed=1)
    assert s.shape.as_list() == [3, 2]
    lp, p, mean, sv = _run([coin.log_prob([1.0, 0.0]), coin.prob([1.0, 0.0]), coin.mean(), s])
    np.testing.assert_allclose(lp, np.log([0.25, 0.5]), rtol=1e-6)
    np.testing.assert_allclose(p, [0.25, 0.5])
    np.testing.assert_allclose(mean, [0.25, 0.5])
    assert set(np.unique(sv)) <= {0.0, 1.0}
    with pytest.raises(NotImplementedError, match="variance is not implemented: _Coin"):
        coin.variance()
    with pytest.raises(NotImplementedError, match="cdf is not implemented: _Coin"):
        coin.cdf(0.5)
