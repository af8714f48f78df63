"""``pbem doctor``: check that the moderator can work, and say so in plain words.

Each check gives one line: ``OK``, ``NOTE`` (worth knowing, not a fault) or ``FAIL``
(needs the operator).  The checks:

- the installation: every template the code renders (``words/*.txt`` included) and
  the default board are found (package data, through ``importlib.resources``) and
  load; a failure names the missing file and how to repair this install mode;
- the configuration loads (file, keys, password variables);
- the games directory exists and is writable;
- every game file loads and its history replays to the recorded state;
- IMAP: the server answers, the login works, the folders exist, and whether it
  offers MOVE and UIDPLUS (without them handled mail is copied, flagged and
  expunged); or the local Maildir inbox;
- SMTP: the server answers EHLO (and accepts the login, when one is configured);
  no mail is sent; or the local Maildir outbox;

  (the mail checks ask the transports: ``Config.probe_inbox``/``probe_outbox``,
  i.e. ``ImapInbox.probe``, ``SmtpOutbox.probe`` and the Maildir probes, and word
  their dicts and their ``LoginRefused``/``TransportError`` here);
- the spool: mails waiting (the oldest, those waiting for a retry and why, those
  whose sending was interrupted) and mails refused for good (``spool/failed``);
- the cycle lock: free, or held by which process;
- the last successful cycle against ``outage_after``, and the moderator's memory
  of bounced addresses, failing SMTP and mails handled but not yet moved (the
  bookkeeping database ``spool/pbem.sqlite3``, opened read-only; an old
  ``spool/moderator.yaml`` not yet imported is read instead).

Nothing is changed: no mail is sent, moved or marked, no folder is created, no
file is written (the games directory check writes and removes a temporary file).

``run_doctor(config_path, echo)`` prints the report and returns the exit status:
0 when nothing failed, else 1.
"""
from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from email import policy
from email.parser import BytesParser
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

import yaml

from .config import Config, ConfigError, load_config
from .mail.transport.base import LoginRefused, TransportError, describe_error
from .store.bookkeeping import DB_NAME, LEGACY_NAME, Bookkeeping, BookkeepingError
from .store.state import ModeratorState
from .store.gamefile import GameStore, StoreError

OK, NOTE, FAIL = "OK", "NOTE", "FAIL"


@dataclass
class Check:
    """One line of the report: ``status`` (OK, NOTE or FAIL), what was checked and
    what was found."""

    status: str
    subject: str
    text: str

    def line(self) -> str:
        """The report line: ``"OK    subject: text"`` (status padded to 5)."""
        return f"{self.status:<5} {self.subject}: {self.text}"


def _ago(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 120:
        return "1 second" if round(seconds) == 1 else f"{seconds:.0f} seconds"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} hours"
    return f"{seconds / 86400:.1f} days"


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        t = datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


# ---------------------------------------------------------------- the checks
#: Every template the code renders: the mails (``render(NAME)``) and the named
#: refusals and notices (``word(DOMAIN, ...)``, ``words/DOMAIN.txt``).
TEMPLATE_FILES = (
    "gm_help.txt", "gm_notice.txt", "gm_reply.txt", "help.txt", "history.txt", "notice.txt",
    "observer.txt", "position.txt", "reply.txt", "rules.txt", "status.txt", "welcome.txt",
    "words/clock.txt", "words/gm.txt", "words/illegal.txt", "words/notices.txt", "words/orders.txt",
)


def install_mode() -> tuple[str, str]:
    """``(how this pbem is installed, how to repair that install)``, from the
    ``pbem`` distribution whose files the running ``moderator`` package is: an
    editable install, a pipx one, a ``--user`` one, one in a virtual environment or
    system-wide; else a source tree run without installing."""
    import importlib.metadata
    import site
    import sys

    import moderator

    here = Path(moderator.__file__).resolve().parent
    try:
        dist = importlib.metadata.distribution("pbem")
    except importlib.metadata.PackageNotFoundError:
        dist = None
    direct: dict = {}
    if dist is not None:
        try:
            direct = json.loads(dist.read_text("direct_url.json") or "{}")
        except ValueError:
            direct = {}
    url = str(direct.get("url", ""))
    source = url[len("file://"):] if url.startswith("file://") else ""
    if direct.get("dir_info", {}).get("editable") and source and Path(source).resolve() / "moderator" == here:
        return (f"an editable install of {source}",
                f"restore the file in {source}/templates/ (`git checkout templates` there)")
    installed = dist is not None and Path(str(dist.locate_file("moderator"))).resolve() == here
    if not installed:
        return (f"the source tree {here.parent} (not installed)",
                f"restore the file in {here.parent}/templates/ (`git checkout templates` there)")
    folder = source if source and Path(source).is_dir() else "<the pbem source folder>"
    prefix = Path(sys.prefix)
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    if (prefix / "pipx_metadata.json").is_file() or ("pipx" in prefix.parts and prefix.parent.name == "venvs"):
        return (f"a pipx install ({prefix})", f"reinstall it: `pipx reinstall {prefix.name}`")
    if user_site and here.is_relative_to(Path(user_site).resolve()):
        return (f"a --user install ({user_site})",
                f"reinstall it: `python3 -m pip install --user --force-reinstall --no-deps {folder}`")
    if sys.prefix != sys.base_prefix:
        return (f"the virtual environment {prefix}",
                f"reinstall it: `{prefix}/bin/python -m pip install --force-reinstall --no-deps {folder}`")
    return (f"a system-wide install ({prefix})",
            f"reinstall it: `python3 -m pip install --force-reinstall --no-deps {folder}`")


def check_install() -> list[Check]:
    """The installation: every template in ``TEMPLATE_FILES`` is found (in
    ``$PBEM_TEMPLATES`` or the shipped templates) and compiles, and the default
    board is found, loads and is valid.  A FAIL names the file and the repair for
    this install mode (:func:`install_mode`).  Never raises."""
    import jinja2

    from . import render
    from .rules import board as boards

    mode, fix = install_mode()
    out = []
    override = os.environ.get("PBEM_TEMPLATES")
    if override and not Path(override).is_dir():
        out.append(Check(FAIL, "templates", f"$PBEM_TEMPLATES names {override}, which is not a folder: "
                                            "the shipped wording is used"))
    packaged = render.packaged_templates()
    where = f"the shipped templates ({packaged})" if packaged is not None else "no shipped templates"
    if override and Path(override).is_dir():
        where = f"$PBEM_TEMPLATES ({override}) and {where}"
    if packaged is None and not (override and Path(override).is_dir()):
        out.append(Check(FAIL, "templates", f"the shipped templates (package data moderator/templates/) "
                                            f"are missing in {mode}: {fix}"))
    else:
        env = render.environment.__wrapped__()  # a fresh environment, not the cached one
        problems, overridden = [], 0
        for name in TEMPLATE_FILES:
            try:
                template = env.get_template(name)
            except jinja2.TemplateNotFound:
                problems.append(f"{name} not found")
            except jinja2.TemplateSyntaxError as exc:
                problems.append(f"{name} does not load: line {exc.lineno}: {exc.message}")
            except (OSError, UnicodeError) as exc:
                problems.append(f"{name} cannot be read: {describe_error(exc)}")
            else:
                if override and template.filename and Path(template.filename).resolve().is_relative_to(
                        Path(override).resolve()):
                    overridden += 1
        if problems:
            out.append(Check(FAIL, "templates", f"{'; '.join(problems)} (looked in {where}; pbem is "
                                                f"{mode}): {fix}"))
        else:
            own = f", {overridden} of them from $PBEM_TEMPLATES ({override})" if overridden else ""
            out.append(Check(OK, "templates", f"the {len(TEMPLATE_FILES)} templates load from "
                                              f"{packaged or override}{own}; pbem is {mode}"))
    path = boards.DEFAULT_BOARD_PATH
    try:
        board = boards.Board.load(path)
        errors = [p for p in boards.check_board(board) if not p.startswith("warning")]
    except (OSError, boards.BoardError, yaml.YAMLError, ValueError, KeyError, TypeError) as exc:
        name = "not found" if isinstance(exc, FileNotFoundError) else f"does not load: {describe_error(exc)}"
        out.append(Check(FAIL, "default board", f"{path} {name} (pbem is {mode}): {fix}"))
        return out
    if errors:
        out.append(Check(FAIL, "default board", f"{path} is not a valid board: {'; '.join(errors)}: {fix}"))
    else:
        out.append(Check(OK, "default board", f"{board.name}: {len(board.cities)} cities, "
                                              f"{len(board.sections)} sections ({path})"))
    return out


def check_config(path: str | os.PathLike[str] | None) -> tuple[Config | None, Check]:
    """``(config, check)``: the loaded configuration and an OK line naming the
    file, the moderator, the transports and the operator; ``(None, FAIL)`` with
    the ConfigError's words when it does not load. Never raises."""
    try:
        config = load_config(path)
    except ConfigError as exc:
        return None, Check(FAIL, "configuration", f"{exc}")
    where = str(config.source) if config.source else "built-in default (no pbem.yaml here)"
    inbox = (f"IMAP {config.imap.host}:{config.imap.port}" if config.imap
             else f"Maildir {config.maildir_inbox}")
    outbox = (f"SMTP {config.smtp.host}:{config.smtp.port}" if config.smtp
              else f"Maildir {config.maildir_outbox}")
    operator = (f"problems are mailed to {config.operator}" if config.operator
                else "no operator address: problems are only logged")
    return config, Check(OK, "configuration",
                         f"{where}; moderator {config.moderator_address}; mail in from {inbox}, "
                         f"out by {outbox}; {operator}")


def check_games_dir(config: Config) -> Check:
    """Whether the games directory exists and takes a file (a temporary one is
    written and removed); a NOTE when it does not exist yet but can be made."""
    d = Path(config.games_dir)
    if not d.exists():
        parent = next((p for p in d.parents if p.exists()), None)
        if parent is not None and os.access(parent, os.W_OK):
            return Check(NOTE, "games directory", f"{d} does not exist yet: it is created by the first `pbem new`; "
                         "until then `pbem run` refuses to read mail (a wrong games_dir must not "
                         "set orders aside)")
        return Check(FAIL, "games directory", f"{d} does not exist and cannot be created")
    if not d.is_dir():
        return Check(FAIL, "games directory", f"{d} is not a directory")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".doctor.", suffix=".tmp", dir=d)
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        return Check(FAIL, "games directory", f"{d} is not writable: {describe_error(exc)}")
    return Check(OK, "games directory", f"{d} is writable")


def check_games(config: Config) -> list[Check]:
    """One line per game file: OK when its history replays to the recorded state
    (with its phase and who is awaited), FAIL with the StoreError's words else."""
    store = GameStore(config.games_dir)
    ids = store.ids()
    if not ids:
        return [Check(NOTE, "games", "no game files yet")]
    out = []
    for gid in ids:
        try:
            rec = store.load(gid, check=True)
        except StoreError as exc:
            out.append(Check(FAIL, f"game {gid}",
                             f"{exc}. The game is stopped: its mails stay in the inbox until the "
                             "file is repaired (see docs/operations.md)"))
            continue
        g = rec.game
        where = "over" if g.phase == "over" else f"phase {g.phase}, waiting for {', '.join(g.waiting_for())}"
        pending = f"; {len(g.log) - rec.notified} event(s) not yet mailed" if rec.notified < len(g.log) else ""
        out.append(Check(OK, f"game {gid}",
                         f"{len(rec.history)} order(s) replay to the recorded state ({where}){pending}"))
    return out


def check_imap(config: Config) -> list[Check]:
    """The inbox: for IMAP, whether the server answers and takes the login, how
    many mails wait, whether it offers MOVE/UIDPLUS and whether the folders exist
    (probed by :meth:`ImapInbox.probe`, which changes nothing); else the Maildir
    inbox (:func:`check_maildir_inbox`)."""
    if config.imap is None:
        return [check_maildir_inbox(config)]
    i = config.imap
    subject = f"IMAP {i.host}:{i.port} ({i.security})"
    try:
        found = config.probe_inbox()
    except LoginRefused as exc:
        return [Check(FAIL, subject, f"the server refused the login as {i.username!r} "
                                     f"(check the password in ${i.password_env}): {exc.detail}")]
    except TransportError as exc:
        return [Check(FAIL, subject, f"{exc.step} failed: {exc.detail}")]
    out = [Check(OK, subject, f"login as {i.username!r} works; {i.mailbox} holds {found['messages']} "
                              f"mail(s) (UIDVALIDITY {found['uidvalidity']})")]
    move, uidplus = found["move"], found["uidplus"]
    if move:
        out.append(Check(OK, "IMAP capabilities", "MOVE offered: handled mails are moved in one step"
                         + ("; UIDPLUS offered" if uidplus else "")))
    elif uidplus:
        out.append(Check(OK, "IMAP capabilities", "no MOVE, but UIDPLUS: handled mails are copied, "
                         "flagged \\Deleted and expunged by UID"))
    else:
        out.append(Check(NOTE, "IMAP capabilities",
                         "neither MOVE nor UIDPLUS: handled mails are copied, flagged \\Deleted and "
                         f"the whole of {i.mailbox} is expunged (mail flagged \\Deleted by other "
                         "clients goes too)"))
    missing = [name for name, exists in found["folders"].items() if not exists]
    if missing:
        out.append(Check(NOTE, "IMAP folders", f"{', '.join(missing)} missing: created by the next cycle"))
    return out


def check_maildir_inbox(config: Config) -> Check:
    """The local Maildir inbox (by :meth:`MaildirInbox.probe`): missing (a NOTE:
    the first cycle creates it), unreadable or not writable (FAIL), else how many
    mails wait."""
    path = Path(config.maildir_inbox)
    try:
        found = config.probe_inbox()
    except TransportError as exc:
        return Check(FAIL, f"Maildir inbox {path}", f"cannot be read: {exc.detail}")
    if not found["exists"]:
        return Check(NOTE, f"Maildir inbox {path}", "does not exist yet (created by the first cycle)")
    if not found["writable"]:
        return Check(FAIL, f"Maildir inbox {path}", "is not writable (handled mails cannot be moved)")
    return Check(OK, f"Maildir inbox {path}", f"readable; {found['messages']} mail(s) waiting")


def check_smtp(config: Config) -> Check:
    """The outbox: for SMTP, whether the server answers EHLO and takes the login
    (by :meth:`SmtpOutbox.probe`; no mail is sent); else whether the Maildir
    outbox can be written."""
    if config.smtp is None:
        path = Path(config.maildir_outbox)
        if config.probe_outbox()["writable"]:
            return Check(OK, f"Maildir outbox {path}", "writable")
        return Check(FAIL, f"Maildir outbox {path}", "is not writable")
    s = config.smtp
    subject = f"SMTP {s.host}:{s.port} ({s.security})"
    try:
        found = config.probe_outbox()
    except LoginRefused as exc:
        return Check(FAIL, subject, f"the server refused the login as {s.username!r} "
                                    f"(check the password in ${s.password_env}): {exc.detail}")
    except TransportError as exc:
        return Check(FAIL, subject, f"cannot talk to the server: {exc.detail}")
    text = f"EHLO answered {found['ehlo_code']}"
    if found["extensions"]:
        text += f" ({', '.join(found['extensions'])})"
    if found["login"]:
        text += f"; login as {s.username!r} works"
    return Check(OK, subject, f"{text}; no mail sent")


def check_spool(config: Config, now: datetime) -> list[Check]:
    """The outgoing spool: mails waiting (FAIL when retried for longer than
    ``outage_after``), interrupted sends, and mails refused for good in
    ``spool/failed`` (the last five named with their SMTP error)."""
    d = Path(config.spool_dir)
    if not d.exists():
        return [Check(NOTE, "spool", f"{d} does not exist yet (created by the first cycle)")]
    out = []
    emls = sorted(d.glob("*.eml"))
    metas = []
    for eml in emls:
        try:
            metas.append(json.loads(eml.with_suffix(".json").read_text()))
        except (OSError, ValueError):
            metas.append({})
    if not emls:
        out.append(Check(OK, "spool", f"{d}: no mail waiting to be sent"))
    else:
        oldest = _parse_time(metas[0].get("created"))
        age = f", the oldest spooled {_ago((now - oldest).total_seconds())} ago" if oldest else ""
        retry = [(e, m) for e, m in zip(emls, metas) if m.get("attempts")]
        sending = [e for e, m in zip(emls, metas) if m.get("sending")]
        status = OK
        text = f"{d}: {len(emls)} mail(s) waiting to be sent{age}"
        if retry:
            e, m = retry[-1]
            text += (f"; {len(retry)} refused for now and waiting for a retry (last error: "
                     f"{m.get('last_error', '?')}; next try {m.get('next_try', '?')})")
            if oldest and (now - oldest).total_seconds() > config.outage_after:
                status = FAIL
        if sending:
            text += (f"; {len(sending)} whose sending was interrupted (sent again, with the same "
                     "Message-ID, by the next cycle)")
        out.append(Check(status, "spool", text))
    failed = sorted((d / "failed").glob("*.eml")) if (d / "failed").is_dir() else []
    if failed:
        lines = []
        for eml in failed[-5:]:
            try:
                meta = json.loads(eml.with_suffix(".json").read_text())
            except (OSError, ValueError):
                meta = {}
            try:
                with open(eml, "rb") as fh:
                    to = str(BytesParser(policy=policy.default).parse(fh, headersonly=True).get("To", "?"))
            except OSError:
                to = "?"
            lines.append(f"{eml.name} to {to}: {meta.get('error', '?')}")
        more = f" (the last 5 of {len(failed)})" if len(failed) > 5 else ""
        out.append(Check(FAIL, "spool/failed",
                         f"{len(failed)} mail(s) refused permanently by the SMTP server{more}: "
                         + "; ".join(lines)
                         + ". Correct the address if it is wrong, then remove or resend them "
                           "(see docs/operations.md)"))
    return out


def _lock_holder(path: Path) -> int | None:
    """The process holding an flock on ``path``, from /proc/locks (Linux)."""
    try:
        inode = path.stat().st_ino
        text = Path("/proc/locks").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" (blocked waiters have "->")
        if "->" in fields or len(fields) < 6:
            continue
        try:
            if int(fields[5].rsplit(":", 1)[1]) == inode and fields[1] == "FLOCK":
                return int(fields[4])
        except (ValueError, IndexError):
            continue
    return None


def _process(pid: int) -> str:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""
    return cmd


def check_lock(config: Config) -> Check:
    """The cycle lock (``spool/cycle.lock``, an flock): free, or held by which
    process (read from ``/proc/locks``); the lock is tried, never kept."""
    path = Path(config.spool_dir) / "cycle.lock"
    if not path.exists():
        return Check(OK, "cycle lock", "free (no cycle has run yet)")
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        return Check(FAIL, "cycle lock", f"{path} cannot be opened: {describe_error(exc)}")
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _lock_holder(path)
            if pid is None:
                who = "by a process not found in /proc/locks (another machine, if the spool is on a network file system?)"
                return Check(NOTE, "cycle lock", f"held {who}")
            cmd = _process(pid)
            alive = "alive" if cmd or Path(f"/proc/{pid}").exists() else "not found"
            return Check(NOTE, "cycle lock",
                         f"held by process {pid} ({alive}{': ' + cmd if cmd else ''}): a cycle is running "
                         "now. If it stays so for long, that process hangs (see docs/operations.md)")
        except OSError as exc:
            return Check(FAIL, "cycle lock", f"{path} cannot be locked: {describe_error(exc)}")
        fcntl.flock(fd, fcntl.LOCK_UN)
        return Check(OK, "cycle lock", "free (no cycle is running)")
    finally:
        os.close(fd)


def _memory(config: Config) -> tuple[SimpleNamespace | None, Check | None]:
    """The moderator's memory, read without writing: the bookkeeping database
    (``spool/pbem.sqlite3``, opened read-only), else an old ``spool/moderator.yaml``
    that no cycle has imported yet.  ``(memory, None)``, ``(None, FAIL)`` when it
    cannot be read, ``(None, None)`` when there is none yet."""
    spool = Path(config.spool_dir)
    db, legacy = spool / DB_NAME, spool / LEGACY_NAME
    if db.exists():
        try:
            with Bookkeeping(db, readonly=True, legacy=None) as bk:
                return SimpleNamespace(
                    last_success=bk.last_success(), smtp_failing_since=bk.smtp_failing_since(),
                    bounces=bk.bounces(), pending_moves=bk.pending_moves()), None
        except (BookkeepingError, sqlite3.Error) as exc:
            return None, Check(FAIL, "moderator state",
                               f"{db} cannot be read: {exc} (see \"The bookkeeping database\" in "
                               "docs/operations.md)")
    if legacy.exists():  # an older pbem's memory, imported by the next cycle
        try:
            yaml.safe_load(legacy.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            return None, Check(FAIL, "moderator state", f"{legacy} cannot be read: {describe_error(exc)}")
        state = ModeratorState.load(legacy)
        return SimpleNamespace(
            last_success=_parse_time(state.last_success), smtp_failing_since=_parse_time(state.smtp_failing_since),
            bounces=dict(state.bounces), pending_moves=list(state.pending_moves)), None
    return None, None


def check_state(config: Config, now: datetime) -> list[Check]:
    """The moderator's memory (the bookkeeping database ``spool/pbem.sqlite3``,
    read-only; or an old ``spool/moderator.yaml`` not yet imported): the last
    successful cycle against ``outage_after``, how long SMTP has been failing,
    bounced addresses and handled mails not yet moved out of the inbox."""
    state, failed = _memory(config)
    if failed is not None:
        return [failed]
    if state is None:
        return [Check(NOTE, "last successful cycle", "none yet")]
    out = []
    hours = config.outage_after / 3600
    last = state.last_success
    if last is None:
        out.append(Check(NOTE, "last successful cycle", "none yet"))
    else:
        gap = (now - last).total_seconds()
        status = FAIL if gap > config.outage_after else OK
        out.append(Check(status, "last successful cycle",
                         f"{last.isoformat(timespec='seconds')}, {_ago(gap)} ago (outage_after: {hours:g} hours)"
                         + ("; the next status mails will say that the moderator was away" if status == FAIL else "")))
    failing = state.smtp_failing_since
    if failing is not None:
        out.append(Check(FAIL, "outgoing mail",
                         f"the SMTP server has accepted nothing since {failing.isoformat(timespec='seconds')} "
                         f"({_ago((now - failing).total_seconds())} ago); the mails wait in the spool"))
    if state.bounces:
        out.append(Check(NOTE, "bounced addresses",
                         "; ".join(f"{a}: {r}" for a, r in sorted(state.bounces.items()))))
    if state.pending_moves:
        out.append(Check(NOTE, "inbox", f"{len(state.pending_moves)} handled mail(s) could not be moved out "
                                        "of the inbox yet; the next cycle moves them"))
    return out


# ---------------------------------------------------------------- the report
def run_checks(config_path: str | os.PathLike[str] | None, now: datetime | None = None) -> list[Check]:
    """Every check, in order; only the installation and configuration checks when
    the configuration does not load."""
    now = now or datetime.now(timezone.utc)
    checks = check_install()
    config, check = check_config(config_path)
    checks.append(check)
    if config is None:
        return checks
    checks.append(check_games_dir(config))
    checks += check_games(config)
    checks += check_imap(config)
    checks.append(check_smtp(config))
    checks += check_spool(config, now)
    checks.append(check_lock(config))
    checks += check_state(config, now)
    return checks


def run_doctor(config_path: str | os.PathLike[str] | None,
               echo: Callable[[str], None] = print, now: datetime | None = None) -> int:
    """Print the report with ``echo``; return 0 when nothing failed, else 1."""
    checks = run_checks(config_path, now)
    for c in checks:
        echo(c.line())
    failed = [c for c in checks if c.status == FAIL]
    if failed:
        echo(f"{len(failed)} problem(s) found; docs/operations.md says how to recover from each.")
        return 1
    echo("All checks passed.")
    return 0
