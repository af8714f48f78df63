"""Durable writes: a file replaced whole or not at all, and a rename that survives a crash.

Every file the moderator writes (game files, spool entries, its own state) goes
through ``atomic_write``: readers see the old file or the new one, never a part.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write", "fsync_dir"]


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
