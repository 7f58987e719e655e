"""`tf.random`: random ops and seeds under their `tf.compat.v1.random` names."""

from tensorflux.ops.nn.candidate_sampling import (
    all_candidate_sampler,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from tensorflux.ops.random.stateful import categorical, multinomial, truncated_normal
from tensorflux.ops.random.stateful import random_gamma as gamma
from tensorflux.ops.random.stateful import random_normal as normal
from tensorflux.ops.random.stateful import random_poisson as poisson
from tensorflux.ops.random.stateful import random_shuffle as shuffle
from tensorflux.ops.random.stateful import random_uniform as uniform
from tensorflux.ops.random.seed import get_seed, set_random_seed

__all__ = ["categorical", "gamma", "get_seed", "multinomial", "normal", "poisson",
           "set_random_seed", "shuffle", "truncated_normal", "uniform", "all_candidate_sampler",
           "fixed_unigram_candidate_sampler", "learned_unigram_candidate_sampler",
           "log_uniform_candidate_sampler", "uniform_candidate_sampler"]
from tensorflux.ops.random.stateless import (stateless_categorical, stateless_multinomial,
                                             stateless_truncated_normal)
from tensorflux.ops.random.stateless import stateless_random_normal as stateless_normal
from tensorflux.ops.random.stateless import stateless_random_uniform as stateless_uniform
__all__ += ["stateless_categorical", "stateless_multinomial", "stateless_normal",
            "stateless_truncated_normal", "stateless_uniform"]
