"""The numba cache is dropped when the kernel package's sources change (numba checks a cached
function against its own file only, not the kernels it calls in other modules)."""

import os

from tensorflux.lib.numerics import jit


def _touch(path, text=""):
    with open(path, "w") as handle:
        handle.write(text)


def test_cache_files_are_dropped_when_sources_change(tmp_path):
    package, cache = tmp_path / "pkg", tmp_path / "cache"
    package.mkdir()
    cache.mkdir()
    _touch(package / "kernels.py", "def f():\n    return 1\n")
    _touch(cache / "kernels.f-1.py311.nbi")
    _touch(cache / "kernels.f-1.py311.1.nbc")
    assert jit.fresh_cache(str(package), str(cache))          # no digest yet: dropped
    assert not list(cache.glob("*.nb?"))
    _touch(cache / "kernels.f-1.py311.nbi")
    assert not jit.fresh_cache(str(package), str(cache))      # same sources: kept
    assert (cache / "kernels.f-1.py311.nbi").exists()
    _touch(package / "helpers.py", "def g():\n    return 2\n")  # another module changed
    assert jit.fresh_cache(str(package), str(cache))
    assert not (cache / "kernels.f-1.py311.nbi").exists()
    assert (cache / "tfx_sources.digest").read_text() == jit._sources_digest(str(package))


def test_an_unwritable_cache_directory_is_left_alone(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    _touch(package / "kernels.py")
    missing_parent = tmp_path / "file"
    _touch(missing_parent)
    # a cache "directory" below a regular file cannot be created: nothing raises
    assert jit.fresh_cache(str(package), os.path.join(str(missing_parent), "cache")) is False
