"""The graph IR: dtypes, shapes, Graph/Operation/Tensor, op definitions, registries, GraphDefs."""
