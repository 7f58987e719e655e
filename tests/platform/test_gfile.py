"""tf.gfile on local paths, with TensorFlow's error classes."""

import os

import pytest

from tensorflux.framework import errors
from tensorflux.platform import gfile, version


def write(path, data: bytes):
    with open(path, "wb") as f:
        f.write(data)


# -- GFile -------------------------------------------------------------------------------------


def test_text_and_binary_reads(tmp_path):
    path = tmp_path / "a.txt"
    write(path, b"hello\nworld\n")
    assert gfile.GFile(str(path), "r").read() == "hello\nworld\n"
    assert gfile.GFile(str(path), "rb").read() == b"hello\nworld\n"
    assert gfile.GFile(path).read() == "hello\nworld\n"  # path-like, default mode 'r'


def test_no_newline_translation(tmp_path):
    path = tmp_path / "crlf.txt"
    write(path, b"a\r\nb")
    assert gfile.GFile(str(path)).read() == "a\r\nb"


def test_readline_readlines_iteration(tmp_path):
    path = str(tmp_path / "a.txt")
    write(path, b"one\ntwo\nthree")
    f = gfile.GFile(path)
    assert f.readline() == "one\n"
    assert f.readlines() == ["two\n", "three"]
    assert f.readline() == ""
    assert list(gfile.GFile(path, "rb")) == [b"one\n", b"two\n", b"three"]
    exhausted = gfile.GFile(path)
    exhausted.read()
    with pytest.raises(StopIteration):
        next(exhausted)


def test_read_n_seek_tell(tmp_path):
    path = str(tmp_path / "a.bin")
    write(path, b"0123456789")
    f = gfile.GFile(path, "rb")
    assert f.read(3) == b"012"
    assert f.tell() == 3
    f.seek(7)
    assert f.read() == b"789"
    f.seek(-4, 2)
    assert f.read(2) == b"67"
    f.seek(1, 1)
    assert f.read() == b"9"
    f.seek(position=2)
    assert f.read(1) == b"2"
    with pytest.raises(errors.InvalidArgumentError):
        f.seek(-1)
    with pytest.raises(errors.InvalidArgumentError):
        f.seek(0, 5)
    assert f.seekable()
    assert f.size() == 10


def test_write_modes_and_context_manager(tmp_path):
    path = str(tmp_path / "out.txt")
    with gfile.GFile(path, "w") as f:
        f.write("abc")
        f.write(b"def")  # bytes are accepted in text mode, as in TF
        f.flush()
        assert f.size() == 6
        assert f.tell() == 6
    with open(path, "rb") as raw:
        assert raw.read() == b"abcdef"
    with gfile.GFile(path, "a") as f:
        f.write("gh\n")
    assert gfile.GFile(path).read() == "abcdefgh\n"
    with gfile.GFile(path, "wb") as f:
        f.write("é")  # str is encoded as UTF-8 in binary mode
    assert gfile.GFile(path, "rb").read() == "é".encode()
    assert gfile.GFile(path, "r").read() == "é"


def test_read_write_plus_mode(tmp_path):
    path = str(tmp_path / "rw.txt")
    write(path, b"abcdef")
    with gfile.GFile(path, "r+") as f:
        assert f.read(2) == "ab"
        f.seek(0)
        f.write("XY")
    assert gfile.GFile(path).read() == "XYcdef"


def test_name_mode_and_aliases(tmp_path):
    path = str(tmp_path / "a.txt")
    write(path, b"x")
    f = gfile.GFile(path, "rb")
    assert (f.name, f.mode) == (path, "rb")
    assert gfile.Open(path).read() == "x"
    assert gfile.FastGFile(path, "rb").read() == b"x"
    f.close()
    f.close()  # closing twice is harmless


def test_write_file_is_created_lazily(tmp_path):
    path = tmp_path / "lazy.txt"
    f = gfile.GFile(str(path), "w")
    assert not path.exists()
    f.write("")
    assert path.exists()
    f.close()


def test_gfile_missing_file_raises_not_found_on_read(tmp_path):
    f = gfile.GFile(str(tmp_path / "missing"))  # construction does not touch the file
    with pytest.raises(errors.NotFoundError, match="missing"):
        f.read()
    with pytest.raises(errors.NotFoundError):
        gfile.GFile(str(tmp_path / "missing"), "rb").readline()


def test_gfile_write_into_missing_directory_raises_not_found(tmp_path):
    with pytest.raises(errors.NotFoundError):
        gfile.GFile(str(tmp_path / "nodir" / "x"), "w").write("x")


def test_gfile_mode_errors(tmp_path):
    path = str(tmp_path / "a.txt")
    write(path, b"x")
    with pytest.raises(errors.InvalidArgumentError):
        gfile.GFile(path, "x")
    with pytest.raises(errors.PermissionDeniedError, match="writing"):
        gfile.GFile(path, "r").write("y")
    with pytest.raises(errors.PermissionDeniedError, match="reading"):
        gfile.GFile(str(tmp_path / "b.txt"), "w").read()


def test_gfile_on_directory_is_failed_precondition(tmp_path):
    with pytest.raises(errors.FailedPreconditionError):
        gfile.GFile(str(tmp_path)).read()


def test_file_scheme_and_unknown_scheme(tmp_path):
    path = tmp_path / "a.txt"
    write(path, b"x")
    assert gfile.Exists("file://" + str(path))
    with pytest.raises(errors.UnimplementedError, match="scheme 'gs'"):
        gfile.Exists("gs://bucket/x")


# -- file system functions ---------------------------------------------------------------------


def test_exists_and_is_directory(tmp_path):
    path = tmp_path / "f"
    write(path, b"")
    assert gfile.Exists(str(path)) and gfile.Exists(str(tmp_path))
    assert not gfile.Exists(str(tmp_path / "nope"))
    assert gfile.IsDirectory(str(tmp_path))
    assert not gfile.IsDirectory(str(path))
    assert not gfile.IsDirectory(str(tmp_path / "nope"))
    assert gfile.Exists(os.fsencode(str(path)))  # bytes paths, as TF accepts


def test_make_dirs(tmp_path):
    deep = tmp_path / "a" / "b" / "c"
    gfile.MakeDirs(str(deep))
    assert deep.is_dir()
    gfile.MakeDirs(str(deep))  # existing is fine
    write(tmp_path / "file", b"")
    with pytest.raises(errors.FailedPreconditionError):
        gfile.MakeDirs(str(tmp_path / "file"))
    with pytest.raises(errors.FailedPreconditionError):
        gfile.MakeDirs(str(tmp_path / "file" / "below"))


def test_mkdir(tmp_path):
    gfile.Mkdir(str(tmp_path / "d"))
    assert (tmp_path / "d").is_dir()
    with pytest.raises(errors.AlreadyExistsError):
        gfile.Mkdir(str(tmp_path / "d"))
    with pytest.raises(errors.NotFoundError):
        gfile.Mkdir(str(tmp_path / "x" / "y"))


def test_list_directory(tmp_path):
    write(tmp_path / "b.txt", b"")
    write(tmp_path / ".hidden", b"")
    (tmp_path / "sub").mkdir()
    assert gfile.ListDirectory(str(tmp_path)) == [".hidden", "b.txt", "sub"]
    with pytest.raises(errors.NotFoundError):
        gfile.ListDirectory(str(tmp_path / "nope"))
    with pytest.raises(errors.NotFoundError):
        gfile.ListDirectory(str(tmp_path / "b.txt"))


def test_remove(tmp_path):
    path = tmp_path / "f"
    write(path, b"")
    gfile.Remove(str(path))
    assert not path.exists()
    with pytest.raises(errors.NotFoundError):
        gfile.Remove(str(path))
    with pytest.raises(errors.FailedPreconditionError):
        gfile.Remove(str(tmp_path))


def test_delete_recursively(tmp_path):
    root = tmp_path / "tree"
    (root / "a" / "b").mkdir(parents=True)
    write(root / "a" / "b" / "f", b"x")
    gfile.DeleteRecursively(str(root))
    assert not root.exists()
    with pytest.raises(errors.NotFoundError):
        gfile.DeleteRecursively(str(root))
    single = tmp_path / "single"
    write(single, b"")
    gfile.DeleteRecursively(str(single))
    assert not single.exists()


def test_glob(tmp_path):
    for name in ("a.txt", "b.txt", "c.csv"):
        write(tmp_path / name, b"")
    assert gfile.Glob(str(tmp_path / "*.txt")) == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    assert gfile.Glob([str(tmp_path / "*.csv"), str(tmp_path / "a.*")]) == [
        str(tmp_path / "a.txt"),
        str(tmp_path / "c.csv"),
    ]
    assert gfile.Glob(str(tmp_path / "nope" / "*")) == []


def test_rename(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    write(src, b"1")
    gfile.Rename(str(src), str(dst))
    assert dst.read_bytes() == b"1" and not src.exists()
    write(src, b"2")
    with pytest.raises(errors.AlreadyExistsError):
        gfile.Rename(str(src), str(dst))
    assert dst.read_bytes() == b"1"
    gfile.Rename(str(src), str(dst), overwrite=True)
    assert dst.read_bytes() == b"2" and not src.exists()
    with pytest.raises(errors.NotFoundError):
        gfile.Rename(str(tmp_path / "nope"), str(tmp_path / "other"))
    assert issubclass(errors.AlreadyExistsError, errors.OpError)


def test_rename_directory(tmp_path):
    (tmp_path / "d1").mkdir()
    write(tmp_path / "d1" / "f", b"x")
    gfile.Rename(str(tmp_path / "d1"), str(tmp_path / "d2"))
    assert (tmp_path / "d2" / "f").read_bytes() == b"x"


def test_copy(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    write(src, b"data")
    gfile.Copy(str(src), str(dst))
    assert dst.read_bytes() == b"data" and src.exists()
    write(src, b"new")
    with pytest.raises(errors.AlreadyExistsError):
        gfile.Copy(str(src), str(dst))
    gfile.Copy(str(src), str(dst), overwrite=True)
    assert dst.read_bytes() == b"new"
    with pytest.raises(errors.NotFoundError):
        gfile.Copy(str(tmp_path / "nope"), str(tmp_path / "x"))


def test_stat(tmp_path):
    path = tmp_path / "f"
    write(path, b"12345")
    info = gfile.Stat(str(path))
    assert info.length == 5
    assert info.is_directory is False
    assert info.mtime_nsec == os.stat(path).st_mtime_ns
    assert gfile.Stat(str(tmp_path)).is_directory is True
    assert gfile.GFile(str(path)).size() == 5
    with pytest.raises(errors.NotFoundError):
        gfile.Stat(str(tmp_path / "nope"))


def test_walk(tmp_path):
    (tmp_path / "s1" / "s2").mkdir(parents=True)
    write(tmp_path / "top.txt", b"")
    write(tmp_path / "s1" / "mid.txt", b"")
    top = str(tmp_path)
    s1 = os.path.join(top, "s1")
    s2 = os.path.join(s1, "s2")
    expected = [(top, ["s1"], ["top.txt"]), (s1, ["s2"], ["mid.txt"]), (s2, [], [])]
    assert list(gfile.Walk(top)) == expected
    assert list(gfile.Walk(top, in_order=False)) == expected[::-1]
    assert list(gfile.Walk(str(tmp_path / "nope"))) == []


def test_walk_pruning_top_down(tmp_path):
    (tmp_path / "keep").mkdir()
    (tmp_path / "skip" / "deep").mkdir(parents=True)
    visited = []
    for dirname, subdirs, _ in gfile.walk(str(tmp_path)):
        visited.append(os.path.relpath(dirname, tmp_path))
        if "skip" in subdirs:
            subdirs.remove("skip")
    assert visited == [".", "keep"]


def test_walk_onerror(tmp_path):
    seen = []
    assert list(gfile.walk(str(tmp_path / "nope"), onerror=seen.append)) == []
    assert len(seen) == 1 and isinstance(seen[0], errors.NotFoundError)


# -- version -----------------------------------------------------------------------------------


def test_version_constants():
    assert version.VERSION == version.__version__ == "1.15.0"
    assert version.VERSION.split(".")[0] == "1"
    assert version.GRAPH_DEF_VERSION == 134
    assert version.GRAPH_DEF_VERSION_MIN_CONSUMER == 0
    assert version.GRAPH_DEF_VERSION_MIN_PRODUCER == 0
    assert isinstance(version.GIT_VERSION, str) and isinstance(version.COMPILER_VERSION, str)
