"""`tf.distributions`: TF1's probability distributions built from graph ops (re-exports)."""

from tensorflux.distributions.distribution import (FULLY_REPARAMETERIZED, NOT_REPARAMETERIZED,
                                                   Distribution, ReparameterizationType)
from tensorflux.distributions.kullback_leibler import RegisterKL, kl_divergence
from tensorflux.distributions.normal import Normal
from tensorflux.distributions.bernoulli import Bernoulli
from tensorflux.distributions.categorical import Categorical
from tensorflux.distributions.uniform import Uniform
from tensorflux.distributions.gamma import Gamma
from tensorflux.distributions.exponential import Exponential
from tensorflux.distributions.beta import Beta
from tensorflux.distributions.dirichlet import Dirichlet
from tensorflux.distributions.multinomial import Multinomial
from tensorflux.distributions.dirichlet_multinomial import DirichletMultinomial
from tensorflux.distributions.laplace import Laplace
from tensorflux.distributions.student_t import StudentT

