"""`tf.contrib.distributions`: the distributions of `tf.distributions` under their contrib names.

Also MultivariateNormalDiag and Independent (the two a 2018 VAE needs). TF 1.15's contrib had
many more (bijectors, other multivariate normals, mixtures); those live in TensorFlow Probability,
which tensorflux does not provide.
"""

from tensorflux.contrib import missing as _missing
from tensorflux.contrib.distributions.independent import Independent
from tensorflux.contrib.distributions.mvn_diag import MultivariateNormalDiag
from tensorflux.distributions import (FULLY_REPARAMETERIZED, NOT_REPARAMETERIZED, Bernoulli, Beta,
                                      Categorical, Dirichlet, DirichletMultinomial, Distribution,
                                      Exponential, Gamma, Laplace, Multinomial, Normal, RegisterKL,
                                      ReparameterizationType, StudentT, Uniform, kl_divergence)

__all__ = ["FULLY_REPARAMETERIZED", "NOT_REPARAMETERIZED", "Bernoulli", "Beta", "Categorical",
           "Dirichlet", "DirichletMultinomial", "Distribution", "Exponential", "Gamma",
           "Independent", "Laplace", "MultivariateNormalDiag", "Multinomial", "Normal",
           "RegisterKL", "ReparameterizationType", "StudentT", "Uniform", "kl_divergence"]

__getattr__ = _missing.module_getattr("contrib.distributions", {
    "*": "not supported (TensorFlow Probability's distribution; tf.distributions has "
         "Normal, Bernoulli, Categorical, Uniform, Gamma, Exponential, Beta, Dirichlet, "
         "Multinomial, DirichletMultinomial, Laplace, StudentT; tf.contrib.distributions "
         "adds MultivariateNormalDiag and Independent)",
    "bijectors": "not supported (TensorFlow Probability's bijectors are not provided)",
})
