"""tf.test.TestCase.assertAllEqual on ragged values compares them as nested lists."""

import tensorflux as tf


class RaggedAssertions(tf.test.TestCase):
    def test_assert_all_equal_compares_ragged_values_as_lists(self):
        a = tf.ragged.constant([[1, 2], [3]])
        self.assertAllEqual(a, [[1, 2], [3]])
        self.assertAllEqual(a, tf.ragged.constant([[1, 2], [3]]))
        with self.assertRaises(AssertionError):
            self.assertAllEqual(a, [[1, 2], [4]])
