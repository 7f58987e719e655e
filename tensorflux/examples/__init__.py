"""`tensorflow.examples`: the tutorial modules TF 1.x shipped in its package and programs import
(`from tensorflow.examples.tutorials.mnist import input_data`)."""
