"""tf.load_op_library & co. refuse C++ plug-ins with a NotFoundError naming the file."""

import pytest

import tensorflux as tf


@pytest.mark.parametrize("loader", ["load_op_library", "load_library",
                                    "load_file_system_library"])
def test_loaders_raise_not_found_naming_the_file(loader, tmp_path):
    existing = tmp_path / "libcustom.so"
    existing.write_bytes(b"\x7fELF")
    for path, missing in ((str(existing), False), (str(tmp_path / "absent.so"), True)):
        with pytest.raises(tf.errors.NotFoundError) as info:
            getattr(tf, loader)(path)
        message = str(info.value)
        assert path in message and "not supported" in message
        assert ("no such file" in message) == missing
