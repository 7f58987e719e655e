"""File formats with no graph knowledge: CRC32C, TFRecord framing and the checkpoint bundle."""
