"""`tf.keras` for TF1 graph mode: layers, models, training loops in the Keras session.

Example:
    >>> model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu",
    ...                                                    input_shape=(4,)),
    ...                              tf.keras.layers.Dense(2, activation="softmax")])
    >>> model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    >>> history = model.fit(x, y, epochs=5, verbose=0)
"""

from tensorflux.keras import (
    activations,
    backend,
    constraints,
    datasets,
    initializers,
    layers,
    losses,
    metrics,
    optimizers,
    regularizers,
    utils,
)
from tensorflux.keras.engine import Input, Model, Sequential
from tensorflux.keras import callbacks, models, preprocessing
from tensorflux.keras import estimator
from tensorflux.keras import experimental, mixed_precision
