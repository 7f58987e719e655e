"""File formats below the graph: checkpoint bundles, TFRecord, PNG, CRC32C, Example parsing."""
