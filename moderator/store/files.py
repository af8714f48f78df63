"""Durable writes: a file replaced whole or not at all, and a rename that survives a crash.

Every file the moderator writes (game files, spool entries, its own state) goes
through ``atomic_write``: readers see the old file or the new one, never a part.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write", "atomic_write_many", "fsync_dir"]


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` (bytes) to ``path`` (a ``Path`` in an existing directory)
    atomically: a temporary file ``.NAME.*.tmp`` in the same directory, flushed and
    fsynced, renamed over ``path``, then the directory fsynced (``fsync_dir``).

    Raises OSError (no space, no permission, a missing directory); the old file
    survives any failure and the temporary file is removed."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(path.parent)


def atomic_write_many(items: list[tuple[Path, bytes]]) -> None:
    """Write every ``(path, data)`` of ``items`` as ``atomic_write`` does, with one
    directory fsync per directory for the whole group instead of one per file:
    each file's data goes to a temporary file that is flushed and fsynced, then
    the temporary files are renamed over their paths in the order given, then each
    directory is fsynced once.  When this returns, every file is durable.

    A crash before the end leaves, for each path, its old file or its new one; a
    process killed meanwhile leaves the renames done so far, a prefix of ``items``
    (a power loss may keep any subset of them on a file system that does not order
    renames: readers of a group that must appear whole check for its last file).
    Raises OSError; the temporary files not yet renamed are removed."""
    staged: list[tuple[str, Path]] = []
    try:
        for path, data in items:
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            staged.append((tmp, path))
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        while staged:
            tmp, path = staged[0]
            os.replace(tmp, path)
            staged.pop(0)
    except BaseException:
        for tmp, _ in staged:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise
    for directory in dict.fromkeys(path.parent for path, _ in items):
        fsync_dir(directory)


def fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` (a ``Path``) durable.  Best effort: never
    raises (not every file system lets a directory be opened or fsynced)."""
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
