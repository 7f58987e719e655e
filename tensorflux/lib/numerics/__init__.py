"""Pure NumPy numerics below the graph: convolution and pooling compute, special functions,
CTC beam search, unicode tables. Testable without a graph."""
