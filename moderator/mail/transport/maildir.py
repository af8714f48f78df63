"""Maildir transports: a local Maildir as inbox and as outbox.

The Maildir format (one file per mail in ``new/``, ``cur/`` and ``tmp/``,
named ``SECONDS.UNIQUE.HOST``; see https://cr.yp.to/proto/maildir.html) with
Maildir++ sub-folders (``PATH/.NAME``, each a Maildir with a
``maildirfolder`` marker), as Dovecot and Courier lay them out. Only the
standard library is used.
"""

from __future__ import annotations

import email.policy
import mailbox
import os
import re
from datetime import datetime, timezone
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from .base import (
    DEFAULT_FETCH_LIMIT,
    HeadersOnly,
    InboundMail,
    Inbox,
    MailStream,
    Outbox,
    TransportError,
    describe_error,
    envelope_of,
)

__all__ = ["MaildirInbox", "MaildirOutbox"]


_MAILDIR_NAME = re.compile(r"^(\d+)\.([^.]*)")
_HEADER_LIMIT = 256 * 1024  # bytes of a header section read at most
_EARLIEST = 631152000.0  # 1990-01-01 UTC: a unique name's time before it is no delivery time
_CHUNK = 64 * 1024


def read_headers(stream, limit: int = _HEADER_LIMIT) -> bytes:
    """The header section of the mail in ``stream`` (up to and including the
    first blank line), read in small chunks; at most ``limit`` bytes, cut at a
    line end when no blank line comes before."""
    data = b""
    while len(data) < limit:
        chunk = stream.read(_CHUNK)
        if not chunk:
            return data
        start = max(0, len(data) - 3)
        data += chunk
        match = re.search(rb"\r?\n\r?\n", data[start:])
        if match:
            return data[:start + match.end()]
    data = data[:limit]
    return data[:data.rfind(b"\n") + 1] if b"\n" in data else data


def _maildir_bytes(msg: EmailMessage) -> bytes:
    """``msg`` serialised with ``\\n`` line ends, as stored in a Maildir."""
    policy = getattr(msg, "policy", None) or email.policy.default
    return msg.as_bytes(policy=policy.clone(linesep="\n"))


def _open_maildir(path: Path) -> mailbox.Maildir:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return mailbox.Maildir(str(path), factory=None, create=True)
    except OSError as exc:
        raise TransportError(
            f"cannot open Maildir {path}: {describe_error(exc)}", path=str(path)
        ) from exc


def _check_folder_name(name: str, what: str) -> str:
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"{what} folder name must be non-empty, without '/' "
                         f"and not start with '.': {name!r}")
    return name


def delivery_order(key: str) -> tuple[float, int, int, str] | None:
    """The delivery time a Maildir unique name ``SECONDS.UNIQUE.HOST`` encodes, as
    a sort key: ``(seconds, microseconds, delivery counter, key)``, the ``M`` and
    ``Q`` parts of ``UNIQUE`` (0 when absent; Python's ``mailbox`` and Dovecot
    write both); None for a name not in that form.  Sorted as text instead,
    ``M99999`` would come after ``M100000``."""
    match = _MAILDIR_NAME.match(key)
    if not match:
        return None
    unique = match.group(2)
    micro = re.search(r"M(\d+)", unique)
    count = re.search(r"Q(\d+)", unique)
    return (float(match.group(1)), int(micro.group(1)) if micro else 0,
            int(count.group(1)) if count else 0, key)


class MaildirInbox(Inbox):
    """An inbox that is a local Maildir (``new/``, ``cur/``, ``tmp/``).

    ``MaildirInbox(path, processed="processed", ignored="ignored",
    max_size=DEFAULT_FETCH_LIMIT)``

    The directory (and its parents) is created if missing. The processed and
    ignored folders are Maildir++ sub-folders of the inbox, made with
    :meth:`mailbox.Maildir.add_folder`: ``PATH/.processed`` and
    ``PATH/.ignored`` (each a Maildir with a ``maildirfolder`` marker), the
    layout Dovecot and Courier use, so a mail client pointed at ``PATH``
    shows them as folders.

    Keys are Maildir unique names. :meth:`fetch` returns mails ordered by
    the delivery time encoded in their file names (seconds, then
    microseconds, then the delivery counter); a file name not in the
    ``SECONDS.UNIQUE.HOST`` form is placed by its modification time.
    Moving renames the file into the folder (same sub-directory, same name,
    flags kept), which is atomic on one file system. The size of each mail is
    the file's size, taken before reading it: a file larger than ``max_size``
    is read up to its first blank line only (``headers_only``).  A mail's
    ``arrived`` is the delivery time its unique name encodes (the same time
    the mails are ordered by: the delivery agent names the file when the mail
    arrives, and a move or a flag change keeps the name), else, for a name
    not in the ``SECONDS.UNIQUE.HOST`` form or with a time before 1990, the
    file's modification time (what :mod:`mailbox` gives as
    ``MaildirMessage.get_date()``; a copy without kept times, a backup
    restored, rewrites it, so it is only the fallback).

    Raises TransportError when the Maildir cannot be created or opened,
    ValueError for a bad folder name.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        processed: str = "processed",
        ignored: str = "ignored",
        max_size: int = DEFAULT_FETCH_LIMIT,
    ) -> None:
        self.path = Path(path)
        self.max_size = int(max_size)
        _check_folder_name(processed, "processed")
        _check_folder_name(ignored, "ignored")
        box = _open_maildir(self.path)
        #: The Maildir++ folders the mails are moved to.
        self.processed_path = self.path / f".{processed}"
        self.ignored_path = self.path / f".{ignored}"
        try:
            box.add_folder(processed)
            box.add_folder(ignored)
        except OSError as exc:
            raise TransportError(
                f"cannot create folders in Maildir {self.path}: {describe_error(exc)}",
                path=str(self.path),
            ) from exc
        self._colon = box.colon

    def _order(self, key: str) -> tuple:
        order = delivery_order(key)
        if order is not None:
            return order
        try:
            subdir, name = self._locate(key)
            mtime = os.path.getmtime(self.path / subdir / name)
        except (KeyError, OSError):
            mtime = 0.0
        return (mtime, 0, 0, key)

    def fetch(self) -> list[InboundMail]:
        """All mails in ``new/`` and ``cur/``, oldest first (see the class doc).

        Raises TransportError when the Maildir cannot be read.
        """
        try:
            # A fresh Maildir object always re-reads the directories; a kept
            # one may miss deliveries that land in the same mtime tick.
            box = mailbox.Maildir(str(self.path), factory=None, create=False)
            keys = sorted(box.keys(), key=self._order)
            times = self._arrivals()
        except (OSError, mailbox.Error) as exc:
            raise TransportError(
                f"cannot read Maildir {self.path}: {describe_error(exc)}", path=str(self.path)
            ) from exc
        mails = []
        for key in keys:
            try:
                mail = self._read(box, key, times.get(key))
            except (KeyError, FileNotFoundError):
                continue  # moved away by someone else since the listing
            except OSError as exc:
                raise TransportError(
                    f"cannot read mail {key} in {self.path}: {describe_error(exc)}",
                    path=str(self.path),
                ) from exc
            mails.append(mail)
        return mails

    def stream(self) -> MailStream:
        """The mails in ``new/`` and ``cur/``, oldest first, as a
        :class:`MailStream`: the keys now, each mail read (as :meth:`fetch`
        reads it: its size first) when the iteration comes to it, one at a
        time.  A mail moved away meanwhile is left out.  Raises
        TransportError (also while iterating)."""
        try:
            box = mailbox.Maildir(str(self.path), factory=None, create=False)
            keys = sorted(box.keys(), key=self._order)
            times = self._arrivals()
        except (OSError, mailbox.Error) as exc:
            raise TransportError(
                f"cannot read Maildir {self.path}: {describe_error(exc)}", path=str(self.path)
            ) from exc

        def read(batch: list[str]) -> list[InboundMail]:
            out = []
            for key in batch:
                try:
                    out.append(self._read(box, key, times.get(key)))
                except (KeyError, FileNotFoundError):
                    continue
                except OSError as exc:
                    raise TransportError(
                        f"cannot read mail {key} in {self.path}: {describe_error(exc)}",
                        path=str(self.path),
                    ) from exc
            return out

        return MailStream(keys, {}, read, batch_bytes=0, max_size=self.max_size)

    def _arrivals(self) -> dict[str, datetime]:
        """``{key: arrival}`` of the mails in ``new/`` and ``cur/`` (UTC): the
        delivery time of the unique name, else the file's modification time
        (see the class doc).  Raises OSError."""
        times: dict[str, datetime] = {}
        for subdir in ("new", "cur"):
            with os.scandir(self.path / subdir) as entries:
                for entry in entries:
                    if entry.name.startswith("."):
                        continue
                    key = entry.name.split(self._colon)[0]
                    named = delivery_order(key)
                    if named is not None and named[0] >= _EARLIEST:
                        stamp = named[0] + (named[1] / 1e6 if named[1] < 1_000_000 else 0)
                    else:
                        try:
                            stamp = entry.stat().st_mtime
                        except FileNotFoundError:
                            continue  # moved away meanwhile
                    try:
                        times[key] = datetime.fromtimestamp(stamp, timezone.utc)
                    except (OverflowError, OSError, ValueError):
                        continue  # a name's time beyond any date: no arrival known
        return times

    def _read(self, box: mailbox.Maildir, key: str, arrived: datetime | None = None) -> InboundMail:
        """One mail: whole, or its headers only when the file exceeds max_size;
        ``arrived``: its delivery time (``_arrivals``)."""
        with box.get_file(key) as stream:
            stream.seek(0, 2)
            size = stream.tell()
            stream.seek(0)
            if size > self.max_size:
                head = read_headers(stream)
                return InboundMail(key=key, raw=HeadersOnly(head, size), size=size,
                                   headers_only=True, arrived=arrived)
            raw = stream.read()
        return InboundMail(key=key, raw=raw, size=len(raw), arrived=arrived)

    def _locate(self, key: str) -> tuple[str, str]:
        """``(subdir, filename)`` of the mail with ``key``; KeyError if none."""
        if not key or "/" in key or self._colon in key or key.startswith("."):
            raise KeyError(key)
        if (self.path / "new" / key).is_file():
            return "new", key
        try:
            with os.scandir(self.path / "cur") as entries:
                for entry in entries:
                    if entry.name.split(self._colon)[0] == key and entry.is_file():
                        return "cur", entry.name
        except OSError as exc:
            raise TransportError(
                f"cannot read Maildir {self.path}: {describe_error(exc)}", path=str(self.path)
            ) from exc
        raise KeyError(key)

    def _move(self, key: str, folder: Path) -> None:
        subdir, name = self._locate(key)
        try:
            os.rename(self.path / subdir / name, folder / subdir / name)
        except FileNotFoundError as exc:
            if not (self.path / subdir / name).exists():
                raise KeyError(key) from exc
            raise TransportError(
                f"cannot move {key} to {folder}: {describe_error(exc)}", path=str(self.path)
            ) from exc
        except OSError as exc:
            raise TransportError(
                f"cannot move {key} to {folder}: {describe_error(exc)}", path=str(self.path)
            ) from exc

    def mark_processed(self, key: str) -> None:
        """Move the mail into ``PATH/.processed`` (KeyError if not in the inbox)."""
        self._move(key, self.processed_path)

    def mark_ignored(self, key: str) -> None:
        """Move the mail into ``PATH/.ignored`` (KeyError if not in the inbox)."""
        self._move(key, self.ignored_path)

    @classmethod
    def probe(
        cls,
        path: str | os.PathLike[str],
        processed: str = "processed",
        ignored: str = "ignored",
    ) -> dict[str, Any]:
        """Look at the Maildir ``path`` without creating or changing anything.

        Returns ``{"path": Path, "exists": bool, "messages": int (mails in
        new/ and cur/), "writable": bool (new/ and cur/ writable, so handled
        mails can be moved), "folders": {processed: bool, ignored: bool}
        (whether each Maildir++ folder exists)}``; for a missing directory
        ``exists`` is False, ``messages`` 0 and ``writable`` False.

        Raises TransportError when the directory exists but cannot be read
        as a Maildir; ValueError for a bad folder name.
        """
        path = Path(path)
        folders = {name: (path / f".{_check_folder_name(name, what)}").is_dir()
                   for name, what in ((processed, "processed"), (ignored, "ignored"))}
        if not path.exists():
            return {"path": path, "exists": False, "messages": 0, "writable": False,
                    "folders": folders}
        try:
            count = len(mailbox.Maildir(str(path), factory=None, create=False).keys())
        except (OSError, mailbox.Error) as exc:
            raise TransportError(
                f"cannot read Maildir {path}: {describe_error(exc)}", path=str(path),
                step="reading",
            ) from exc
        writable = os.access(path / "cur", os.W_OK) and os.access(path / "new", os.W_OK)
        return {"path": path, "exists": True, "messages": count, "writable": writable,
                "folders": folders}

    def __repr__(self) -> str:
        return f"MaildirInbox({str(self.path)!r})"


class MaildirOutbox(Outbox):
    """An outbox that files each sent message into a local Maildir's ``new/``.

    ``MaildirOutbox(path)``; the directory (and its parents) is created if
    missing. Messages are stored with ``\\n`` line ends, serialised with
    their own policy; the file can be read back with :class:`MaildirInbox`
    or any mail reader. The envelope is checked as for SMTP (so a message
    that SMTP would refuse is refused here too) but is not stored.

    Raises TransportError when the Maildir cannot be created.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._box = _open_maildir(self.path)
        #: Maildir key of the message written by the last successful send().
        self.last_key: str | None = None

    def send(self, msg: EmailMessage) -> None:
        """Write ``msg`` into the Maildir.

        Raises ValueError for a message without a From or without To/Cc,
        TransportError when the file cannot be written.
        """
        envelope_of(msg)
        data = _maildir_bytes(msg)
        try:
            self.last_key = self._box.add(data)
        except OSError as exc:
            raise TransportError(
                f"cannot write to Maildir {self.path}: {describe_error(exc)}",
                path=str(self.path),
            ) from exc

    @classmethod
    def probe(cls, path: str | os.PathLike[str]) -> dict[str, Any]:
        """Look at the Maildir ``path`` without creating anything.

        Returns ``{"path": Path, "exists": bool, "writable": bool}``;
        ``writable`` says whether mails can be written there: the directory
        itself, or when missing its nearest existing parent (where it would
        be created). Never raises.
        """
        path = Path(path)
        target = path if path.exists() else next((p for p in path.parents if p.exists()), path)
        return {"path": path, "exists": path.exists(), "writable": os.access(target, os.W_OK)}

    def __repr__(self) -> str:
        return f"MaildirOutbox({str(self.path)!r})"

