"""`tf.keras.utils.get_file`: a file fetched once from a URL into the Keras cache (~/.keras).

The cached copy is reused while it exists (and, when a hash is given, while its hash matches);
otherwise it is fetched again. Archives (tar, tar.gz, tar.bz2, zip) can be unpacked next to it.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
import urllib.error
import urllib.request
import zipfile

__all__ = ["get_file", "validate_file", "cache_root"]

_CHUNK = 1 << 16


def cache_root(cache_dir=None):
    """The Keras cache directory: `cache_dir`, else `~/.keras`; `/tmp/.keras` if unwritable."""
    base = os.path.expanduser(cache_dir if cache_dir is not None
                              else os.path.join("~", ".keras"))
    if os.path.isdir(base) and not os.access(base, os.W_OK):
        base = os.path.join("/tmp", ".keras")
    return base


def _hash_file(path, algorithm):
    h = hashlib.sha256() if algorithm == "sha256" else hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def validate_file(fpath, file_hash, algorithm="auto"):
    """Whether the file at `fpath` has hash `file_hash`.

    Args:
      fpath: path of the file.
      file_hash: expected hex digest (sha256 or md5).
      algorithm: "sha256", "md5" or "auto" (sha256 for a 64-character hash, else md5).

    Returns:
      True when the digest matches.

    Raises:
      ValueError: for an unknown `algorithm`.
    """
    if algorithm not in ("auto", "sha256", "md5"):
        raise ValueError(f"get_file: hash_algorithm must be 'auto', 'sha256' or 'md5', "
                         f"got {algorithm!r}.")
    if algorithm == "auto":
        algorithm = "sha256" if len(str(file_hash)) == 64 else "md5"
    return _hash_file(fpath, algorithm) == str(file_hash)


def _inside(root, member_name):
    target = os.path.realpath(os.path.join(root, member_name))
    return target == os.path.realpath(root) or target.startswith(os.path.realpath(root) + os.sep)


def _extract_archive(fpath, dest, archive_format="auto"):
    """Unpacks a tar or zip archive into `dest`; returns whether `fpath` was such an archive."""
    if archive_format is None:
        return False
    formats = ["tar", "zip"] if archive_format == "auto" else (
        [archive_format] if isinstance(archive_format, str) else list(archive_format))
    for fmt in formats:
        if fmt == "tar" and tarfile.is_tarfile(fpath):
            with tarfile.open(fpath) as archive:
                members = [m for m in archive.getmembers() if _inside(dest, m.name)]
                archive.extractall(dest, members=members)
            return True
        if fmt == "zip" and zipfile.is_zipfile(fpath):
            with zipfile.ZipFile(fpath) as archive:
                for name in archive.namelist():
                    if _inside(dest, name):
                        archive.extract(name, dest)
            return True
    return False


def get_file(fname, origin, untar=False, md5_hash=None, file_hash=None,
             cache_subdir="datasets", hash_algorithm="auto", extract=False,
             archive_format="auto", cache_dir=None):
    """Path of `fname` in the Keras cache, fetched from `origin` if it is not there yet.

    The file goes to `cache_dir` (default `~/.keras`) / `cache_subdir` / `fname`; an absolute
    `fname` or `cache_subdir` is used as given.

    Args:
      fname: file name (or absolute path).
      origin: URL to fetch the file from.
      untar: deprecated for `extract`: the file is `fname + ".tar.gz"`, unpacked into the cache
        directory; returns the unpacked path.
      md5_hash: deprecated for `file_hash` (an md5 digest).
      file_hash: expected sha256 or md5 digest; a cached file that does not match is fetched
        again, a fetched file that does not match raises ValueError.
      cache_subdir: subdirectory of the cache directory.
      hash_algorithm: "auto", "sha256" or "md5".
      extract: unpack a tar or zip archive next to the file.
      archive_format: "auto", "tar", "zip", a list of them, or None.
      cache_dir: cache directory (default `~/.keras`).

    Returns:
      The path of the cached file (or of the unpacked directory when `untar`).

    Raises:
      Exception: "URL fetch failure on <origin>: ..." when the fetch fails (as Keras does).
      ValueError: when a fetched file does not match `file_hash`.
    """
    if not fname:
        raise ValueError("get_file: fname must be a non-empty file name.")
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    datadir = os.path.join(cache_root(cache_dir), cache_subdir)
    os.makedirs(datadir, exist_ok=True)
    if untar:
        untar_fpath = os.path.join(datadir, fname)
        fpath = untar_fpath + ".tar.gz"
    else:
        fpath = os.path.join(datadir, fname)

    download = not os.path.exists(fpath)
    if not download and file_hash is not None and not validate_file(fpath, file_hash,
                                                                     hash_algorithm):
        print(f"A local file was found, but it seems to be incomplete or outdated because the "
              f"{hash_algorithm} file hash does not match the original value of {file_hash} "
              f"so we will re-download the data.")
        download = True
    if download:
        print("Downloading data from", origin)
        try:
            try:
                urllib.request.urlretrieve(origin, fpath)
            except urllib.error.HTTPError as e:
                raise Exception(f"URL fetch failure on {origin}: {e.code} -- {e.msg}") from e
            except urllib.error.URLError as e:
                raise Exception(f"URL fetch failure on {origin}: "
                                f"{getattr(e, 'errno', None)} -- {e.reason}") from e
        except BaseException:
            if os.path.exists(fpath):
                os.remove(fpath)
            raise
        if file_hash is not None and not validate_file(fpath, file_hash, hash_algorithm):
            raise ValueError(f"get_file: the file fetched from {origin} does not match the "
                             f"expected {hash_algorithm} hash {file_hash}.")

    if untar:
        if not os.path.exists(untar_fpath):
            _extract_archive(fpath, datadir, archive_format="tar")
        return untar_fpath
    if extract:
        _extract_archive(fpath, datadir, archive_format)
    return fpath
