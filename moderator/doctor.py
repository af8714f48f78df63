"""``pbem doctor``: check that the moderator can work, and say so in plain words.

Each check gives one line: ``OK``, ``NOTE`` (worth knowing, not a fault) or ``FAIL``
(needs the operator), ending with the section of docs/operations.md that explains
it (``Check.section``, from ``SECTIONS``).  No mail password is needed: without
one the configuration line fails and the mail servers are not checked.  The checks:

- the installation: every template the code renders (``words/*.txt`` included) and
  the default board are found (package data, through ``importlib.resources``) and
  load; a failure names the missing file and how to repair this install mode;
  the board map's fonts (fontconfig) cover Latin with diacritics and Chinese
  (a NOTE names the Debian package otherwise);
- the configuration loads (file, keys, password variables);
- the games directory exists and is writable;
- every game file loads and its history replays to the recorded state; a game the
  games index knows whose file is missing fails;
- IMAP: the server answers, the login works, the folders exist, and whether it
  offers MOVE and UIDPLUS (without them handled mail is copied, flagged and
  expunged); or the local Maildir inbox;
- SMTP: the server answers EHLO (and accepts the login, when one is configured);
  no mail is sent; or the local Maildir outbox; whether the From address is the
  account that logs in (Gmail and Outlook rewrite or refuse other senders); the
  mails sent today against ``smtp.daily_limit``; the server's own sending limit
  last met (``mail.answers``), when sending resumes, the daily limit learned;
- OAuth2 (``auth: oauth2``): the token file gives a fresh access token (which
  may refresh it), until when, and when the sign-in was made;
- a TLS handshake that fails is said in words: a CA this machine does not trust
  (``ca_file``), a certificate that does not name the host as configured, an
  expired one;

  (the mail checks ask the transports: ``Config.probe_inbox``/``probe_outbox``,
  i.e. ``ImapInbox.probe``, ``SmtpOutbox.probe`` and the Maildir probes, and word
  their dicts and their ``LoginRefused``/``TransportError`` here);
- the spool: mails waiting (the oldest, those waiting for a retry and why, those
  whose sending was interrupted), orphan metadata files, and mails refused for
  good (``spool/failed``);
- disk space where games, spool and bookkeeping live (``MIN_FREE_BYTES``,
  ``MIN_FREE_FRACTION``);
- the cycle lock: free, or held by which process and for how long (FAIL beyond
  ``LOCK_STUCK_AFTER``);
- the last successful cycle against ``outage_after``, and the moderator's memory
  of bounced addresses, failing SMTP and mails handled but not yet moved (the
  bookkeeping database ``spool/pbem.sqlite3``, opened read-only; an old
  ``spool/moderator.yaml`` not yet imported is read instead).

Nothing is changed: no mail is sent, moved or marked, no folder is created, no
file is written (the games directory check writes and removes a temporary file;
an OAuth2 access token that is due is refreshed and the token file rewritten, as
any cycle would).

``run_doctor(config_path, echo)`` prints the report and returns the exit status:
0 when nothing failed, else 1.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
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
from .store.spool import ORPHAN_AGE, OWNER, Spool
from .store.state import ModeratorState
from .store.gamefile import GameStore, StoreError

OK, NOTE, FAIL = "OK", "NOTE", "FAIL"

MIN_FREE_BYTES = 50 * 1024 * 1024
"""Doctor fails when a file system of games or spool has less free space ..."""
MIN_FREE_FRACTION = 0.01
"""... or less than this share of it free."""
LOCK_STUCK_AFTER = 3600.0
"""Seconds a cycle may hold the lock before doctor calls it hung: a cycle takes
seconds (minutes on a slow relay); an hour is twelve runs of the 5-minute timer."""


#: The sections of docs/operations.md that doctor's lines name, by subject (or
#: the longest of these that starts the subject: see ``Check.section``).
SECTIONS = {
    "templates": "Installation", "default board": "Installation",
    "configuration": "Configuration",
    "games directory": "Game files", "games": "Game files", "game": "Game files",
    "IMAP": "Incoming mail", "Maildir inbox": "Incoming mail", "inbox": "Incoming mail",
    "SMTP": "Outgoing mail", "Maildir outbox": "Outgoing mail", "outgoing mail": "Outgoing mail",
    "spool": "The spool", "spool/failed": "The spool", "bounced addresses": "Bounced addresses",
    "cycle lock": "The cycle lock", "disk space": "Disk space",
    "last successful cycle": "The last successful cycle", "moderator state": "The bookkeeping database",
    "open game": "Open games", "registry": "Open games", "substitute pool": "Substitute pool",
    "IMAP folders": "Mail servers", "IMAP IDLE": "Mail servers",
    "OAuth2": "Mail providers", "sender": "Mail providers", "daily sending limit": "Mail providers",
    "SMTP sending limit": "Outgoing mail",
    "map fonts": "Languages",
}


@dataclass
class Check:
    """One line of the report: ``status`` (OK, NOTE or FAIL), what was checked and
    what was found; ``section``: the section of docs/operations.md that explains
    it (default: from ``SECTIONS`` by the subject, or its first word)."""

    status: str
    subject: str
    text: str
    section: str = ""

    def __post_init__(self) -> None:
        if not self.section:
            key = max((k for k in SECTIONS if self.subject == k or self.subject.startswith(k + " ")),
                      key=len, default="")
            self.section = SECTIONS.get(key, "")

    def line(self) -> str:
        """The report line: ``"OK    subject: text  [docs/operations.md: Section]"``
        (status padded to 5)."""
        return f"{self.status:<5} {self.subject}: {self.text}  [docs/operations.md: {self.section}]"


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
    "dividends.txt", "gm_help.txt", "gm_notice.txt", "gm_reply.txt", "help.txt", "history.txt",
    "legal.txt", "notice.txt", "observer.txt", "position.txt", "reply.txt", "rules.txt", "status.txt",
    "welcome.txt", "words/board.txt", "words/clock.txt", "words/events.txt", "words/gm.txt",
    "words/headlines.txt", "words/hidden.txt", "words/illegal.txt", "words/language.txt", "words/layout.txt",
    "words/legal.txt", "words/limits.txt", "words/options.txt", "words/notices.txt", "words/operator.txt", "words/orders.txt",
    "words/person.txt", "words/press.txt", "words/seats.txt", "words/signup.txt", "words/pool.txt", "words/threads.txt", "words/proposals.txt",
    "words/advance.txt",
    "mail/base.html", "mail/blocks.html", "mail/figures.html", "mail/status.html",
    "mail/text.html", "mail/welcome.html",
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
    out.append(check_map_fonts())
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


def check_map_fonts() -> Check:
    """The fonts the board map draws with (``moderator/render/fonts.py``, found by
    fontconfig): OK naming them when one covers Latin with diacritics ("é", "ř")
    and one Chinese ("李"); NOTE naming what the map cannot draw and the Debian
    packages that would (fonts-dejavu-core, fonts-noto-cjk) otherwise.  Never
    raises."""
    from .render import fonts

    faces = fonts.chain()
    found = [f for f in faces if f.path is not None]
    latin = any(f.covers("é") and f.covers("ř") for f in found)
    cjk = any(f.covers("李") for f in found)
    if latin and cjk:
        names = ", ".join(Path(f.path).name + (f":{f.index}" if f.index else "") for f in found)
        return Check(OK, "map fonts", f"the board map draws every script of its languages with {names}")
    if not found:
        return Check(NOTE, "map fonts", "fontconfig found no font: the board map draws with Pillow's bundled "
                                        "font, names and words beyond ASCII without accents or left out; "
                                        "install fontconfig fonts-dejavu-core fonts-noto-cjk")
    missing = [what for what, ok in (("Latin letters with diacritics (fonts-dejavu-core)", latin),
                                     ("Chinese characters (fonts-noto-cjk)", cjk)) if not ok]
    return Check(NOTE, "map fonts", f"no font for {' and '.join(missing)}: the board map draws them "
                                    "without accents or leaves them out; install the package named")


def check_config(path: str | os.PathLike[str] | None) -> tuple[Config | None, Check]:
    """``(config, check)``: the loaded configuration and an OK line naming the
    file, the moderator, the transports and the operator; ``(None, FAIL)`` with
    the ConfigError's words when it does not load. Never raises."""
    try:
        config = load_config(path, passwords=False)
    except ConfigError as exc:
        return None, Check(FAIL, "configuration", f"{exc}")
    where = str(config.source) if config.source else "built-in default (no pbem.yaml here)"
    inbox = (f"IMAP {config.imap.host}:{config.imap.port}" if config.imap
             else f"Maildir {config.maildir_inbox}")
    outbox = (f"SMTP {config.smtp.host}:{config.smtp.port}" if config.smtp
              else f"Maildir {config.maildir_outbox}")
    operator = (f"problems are mailed to {config.operator}" if config.operator
                else "no operator address: problems are only logged")
    unset = [f"${server.password_env}" for server in (config.imap, config.smtp)
             if server is not None and server.password_env and server.password is None]
    if unset:
        return config, Check(FAIL, "configuration",
                             f"{where}: the password variable(s) {', '.join(sorted(set(unset)))} are not set: "
                             "`pbem run` cannot start (set them where pbem runs: the systemd unit's "
                             "EnvironmentFile, the crontab); the mail server checks are skipped")
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
    out = []
    for gid in _known_games(config):
        if gid not in ids:
            out.append(Check(FAIL, f"game {gid}",
                             f"its file {store.path(gid)} is missing (the games index knows the game): its "
                             "mails stay in the inbox until the file is back from a backup; "
                             f"`pbem forget {gid}` if the game was removed on purpose"))
    if not ids:
        return out or [Check(NOTE, "games", "no game files yet")]
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
        pending = f"; {len(g.events) - rec.notified} event(s) not yet mailed" if rec.notified < len(g.events) else ""
        out.append(Check(OK, f"game {gid}",
                         f"{len(rec.history)} order(s) replay to the recorded state ({where}){pending}"))
    return out


#: OpenSSL's certificate verification codes (``X509_V_ERR_*``) in words.
_CERT_CODES = {
    9: "the server's certificate is not valid yet (is this machine's clock right?)",
    10: "the server's certificate has expired: the server's operator must renew it",
    18: "the server's certificate is self-signed and this machine does not trust it",
    19: "the server's certificate comes from a CA this machine does not trust",
    20: "the server's certificate comes from a CA this machine does not trust",
    21: "the server's certificate comes from a CA this machine does not trust",
}


def tls_problem(exc: BaseException, section: str, host: str) -> str | None:
    """Why a TLS handshake failed, in words, when ``exc`` (or what caused it)
    is an ``ssl`` error; None otherwise. ``section`` (``imap``/``smtp``) and
    ``host`` name the configuration keys to change."""
    import ssl

    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ssl.SSLCertVerificationError):
            code = exc.verify_code
            if code in (62, 64):  # X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH
                return (f"the server's certificate does not name the host as configured "
                        f"({section}.host: {host}); use a name the certificate lists in "
                        f"{section}.host (an IP address such as 127.0.0.1 must itself be in "
                        "the certificate)")
            text = _CERT_CODES.get(code, f"the server's certificate was not accepted "
                                         f"({exc.verify_message})")
            if code in (18, 19, 20, 21):
                text += (f": if it is your own CA, put its certificate (PEM) in a file and name "
                         f"that file in {section}.ca_file")
            return text
        if isinstance(exc, ssl.SSLError):
            return (f"the TLS handshake failed ({exc.reason or exc}): check {section}.security "
                    "and port (ssl is TLS from the first byte, ports 993/465; starttls upgrades "
                    "a plain connection, ports 143/587)")
        exc = exc.__cause__ or exc.__context__
    return None


def _login_refused(server, exc: LoginRefused) -> str:
    if server.auth == "oauth2":
        return (f"the server refused the OAuth2 login as {server.username!r} "
                f"(see the oauth line; `pbem auth status`): {exc.detail}")
    return (f"the server refused the login as {server.username!r} "
            f"(check the password in {server.secret_source}): {exc.detail}")


def check_oauth(config: Config) -> list[Check]:
    """For an ``oauth`` section used by a server: whether the token file gives
    an access token now (refreshing it when due, as a cycle would), until when
    it is valid and when `pbem auth login` was run; FAIL with the words of the
    OAuthError (which say what to run) else."""
    from .mail.oauth import OAuthError, TokenSource

    users = [s for s in (config.imap, config.smtp) if s is not None and s.auth == "oauth2"]
    if config.oauth is None or not users:
        return []
    o = config.oauth
    subject = f"OAuth2 ({o.provider})"
    try:
        found = TokenSource(o, users[0].username).status()
    except OAuthError as exc:
        return [Check(FAIL, subject, f"no access token: {exc}")]
    when = lambda t: t.strftime("%Y-%m-%d %H:%M UTC") if t else "unknown"  # noqa: E731
    who = found["account"] or users[0].username
    last = found.get("last_login")
    refused = (f"; {last['server']} refused the access token at {when(last['at'])} ({last['said']}), "
               "it was refreshed since" if last is not None and not last["ok"] else "")
    return [Check(OK, subject, f"signed in as {who} on {when(found['obtained'])} ({o.token_file}); "
                               f"access token valid until {when(found['expiry'])}, renewed "
                               f"by each cycle with the refresh token{refused}")]


def check_sender(config: Config) -> Check | None:
    """A NOTE when the moderator address (the From of every mail) is not the
    account the SMTP server authenticates: Gmail rewrites From to the account
    and Outlook/Microsoft 365 refuse the mail (SendAsDenied) unless the address
    is an alias or send-as of it. None when there is no SMTP login or the login
    name is not an address (a self-hosted server decides itself)."""
    s = config.smtp
    if s is None or s.username is None or "@" not in s.username:
        return None
    if s.username.strip().lower() == config.moderator_address.strip().lower():
        return Check(OK, "sender", f"the From address {config.moderator_address} is the account "
                                   "that logs in to SMTP")
    return Check(NOTE, "sender",
                 f"warning: the From address {config.moderator_address} (moderator.address) is not "
                 f"the SMTP account {s.username} (smtp.username): Gmail rewrites From to the account "
                 "and Outlook refuses such mail unless the address is an alias (send-as) of the "
                 "account; use the same address for both if you can")


def check_daily_limit(config: Config, now: datetime) -> Check | None:
    """With ``smtp.daily_limit``: the mails sent today and yesterday (UTC, from
    the bookkeeping's ``daily_counts``, read-only), those waiting in the spool,
    and whether one round of status mails (one to every player of every game not
    over) fits the limit; a NOTE when the limit was reached or would be. None
    without a limit."""
    from datetime import timedelta

    from .moderation.send import DAILY_SENT

    limit = config.smtp.daily_limit if config.smtp is not None else None
    if limit is None:
        return None
    today = yesterday = 0
    db = Path(config.spool_dir) / DB_NAME
    if db.exists():
        try:
            with Bookkeeping(db, readonly=True, legacy=None) as bk:
                today = bk.count_today(DAILY_SENT, now)
                yesterday = bk.count_today(DAILY_SENT, now - timedelta(days=1))
        except (BookkeepingError, sqlite3.Error):
            pass  # check_state names an unreadable database
    waiting = len(list(Path(config.spool_dir).glob("*.eml")))
    players = 0
    store = GameStore(config.games_dir)
    for gid in store.ids():
        try:
            game = store.load(gid).game
        except StoreError:
            continue  # check_games names it
        if game.phase != "over":
            players += len(game.players)
    text = (f"{today} of {limit} mails sent today (UTC), {yesterday} yesterday; "
            f"{waiting} waiting in the spool")
    problems = []
    if today >= limit:
        problems.append("the limit is reached: the waiting mails go out after midnight UTC")
    elif yesterday >= limit:
        problems.append("the limit was reached yesterday, so mails were held for a day")
    if players > limit:
        problems.append(f"one round of status mails to the {players} players of the running games "
                        "is more than the limit: every turn will be delayed by a day")
    if problems:
        return Check(NOTE, "daily sending limit", f"{text}; " + "; ".join(problems)
                     + " (raise smtp.daily_limit if the provider allows, or run fewer games)")
    return Check(OK, "daily sending limit", f"{text}; a round of status mails to the {players} "
                                            "players of the running games fits")


def check_smtp_limit(config: Config, now: datetime) -> Check | None:
    """The SMTP server's sending limit the moderator last met
    (``Bookkeeping.smtp_limit``, read-only), the daily limit learned from it,
    and the games whose deadlines wait for held mails (``mail_held``): a NOTE
    while the limit holds mail (what the server said, the provider, since
    when, when sending resumes, how many wait), or when a limit was learned;
    None when the server never answered with a limit."""
    db = Path(config.spool_dir) / DB_NAME
    if config.smtp is None or not db.exists():
        return None
    try:
        with Bookkeeping(db, readonly=True, legacy=None) as bk:
            limit, learned, held = bk.smtp_limit(), bk.learned_daily_limit(now), bk.mail_held()
    except (BookkeepingError, sqlite3.Error):
        return None  # check_state names an unreadable database
    if limit is None and learned is None:
        return None
    parts = []
    if limit is not None:
        until = _parse_time(limit.get("until"))
        waiting = len(list(Path(config.spool_dir).glob("*.eml")))
        when = "resumes" if until is not None and until > now else "may resume (the window has passed)"
        parts.append(f"{limit.get('provider')} answered at {limit.get('since')}: {limit.get('answer')} "
                     f"(after {limit.get('accepted')} mail(s) that UTC day); sending {when} at "
                     f"{limit.get('until')}; {waiting} mail(s) wait in the spool")
    if learned is not None:
        configured = config.smtp.daily_limit
        parts.append(f"learned daily limit: {learned} mails a day (what the server took before its daily "
                     f"limit; smtp.daily_limit: {configured if configured is not None else 'none'})")
    if held:
        parts.append(f"deadlines held for the waiting mails of game(s) {', '.join(sorted(held))}")
    return Check(NOTE, "SMTP sending limit", "; ".join(parts))


def _known_games(config: Config) -> list[str]:
    """The game ids the games index knows (read-only; [] without a database)."""
    db = Path(config.spool_dir) / DB_NAME
    if not db.exists():
        return []
    try:
        with Bookkeeping(db, readonly=True, legacy=None) as bk:
            return bk.game_ids()
    except (BookkeepingError, sqlite3.Error):
        return []  # check_state reports the database


def check_imap(config: Config) -> list[Check]:
    """The inbox: for IMAP, whether the server answers and takes the login, how
    many mails wait, whether it offers MOVE/UIDPLUS and IDLE, where the folders go and
    whether they exist or can be made (probed by :meth:`ImapInbox.probe`, which
    changes nothing but a test folder it creates and removes); else the Maildir
    inbox (:func:`check_maildir_inbox`)."""
    if config.imap is None:
        return [check_maildir_inbox(config)]
    i = config.imap
    subject = f"IMAP {i.host}:{i.port} ({i.security})"
    if i.password is None and i.auth != "oauth2":
        return [Check(NOTE, subject, f"not checked: ${i.password_env} is not set", "Configuration")]
    try:
        found = config.probe_inbox()
    except LoginRefused as exc:
        return [Check(FAIL, subject, _login_refused(i, exc))]
    except TransportError as exc:
        tls = tls_problem(exc, "imap", i.host)
        if tls is not None:
            return [Check(FAIL, subject, f"{exc.step or 'connect'} failed: {tls}")]
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
    out.append(Check(OK, "IMAP IDLE", "offered: `pbem run --loop` starts a cycle as soon as mail arrives")
               if found["idle"] else
               Check(NOTE, "IMAP IDLE", "not offered: `pbem run --loop` checks for mail every --interval seconds"))
    out.append(_check_imap_folders(found))
    return out


def _check_imap_folders(found: dict) -> Check:
    """Where the processed and ignored folders go on this server (its personal
    namespace) and whether a folder can be made there: the probe created and
    removed a test folder. FAIL when a folder is missing and cannot be made
    (every cycle would stop before reading mail)."""
    prefix, delimiter = found["namespace"]
    where = (f"folders are under {prefix!r} (separator {delimiter!r})" if prefix
             else f"folders are at the top level (separator {delimiter!r})")
    names = ", ".join(placed if placed == name else f"{name} as {placed}"
                      for name, placed in found["placed"].items())
    missing = [found["placed"][name] for name, exists in found["folders"].items() if not exists]
    if found["create_error"] is not None:
        why = f"the server refused to create the test folder {found['test_folder']!r}: {found['create_error']}"
        if missing:
            return Check(FAIL, "IMAP folders", f"{', '.join(missing)} missing and cannot be created ({why}); "
                         f"{where}: set imap.processed/imap.ignored to folders that exist (full names work)")
        return Check(NOTE, "IMAP folders", f"{names} exist; {why}")
    made = f"a test folder was created and removed ({found['test_folder']})"
    if found["delete_error"] is not None:
        made = (f"the test folder {found['test_folder']!r} was created but not removed "
                f"({found['delete_error']}): delete it by hand")
    if missing:
        return Check(NOTE, "IMAP folders", f"{where}; {', '.join(missing)} missing: created by the next "
                     f"cycle ({made})")
    return Check(OK, "IMAP folders", f"{names}: {where}; {made}")


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
    if s.username and s.password is None and s.auth != "oauth2":
        return Check(NOTE, subject, f"not checked: ${s.password_env} is not set", "Configuration")
    try:
        found = config.probe_outbox()
    except LoginRefused as exc:
        return Check(FAIL, subject, _login_refused(s, exc))
    except TransportError as exc:
        tls = tls_problem(exc, "smtp", s.host)
        if tls is not None:
            return Check(FAIL, subject, f"{exc.step or 'connect'} failed: {tls}")
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
        held = [e for e, m in zip(emls, metas) if m.get("digest")]  # waiting for a daily digest
        due = [m for m in metas if not m.get("digest")]
        oldest = _parse_time(due[0].get("created")) if due else None
        age = f", the oldest spooled {_ago((now - oldest).total_seconds())} ago" if oldest else ""
        if held:
            age += f"; {len(held)} held for a daily digest (sent with it, moderation/digest.py)"
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
        maybe = [e for e, m in zip(emls, metas) if m.get("maybe_sent")]
        if maybe:
            text += (f"; {len(maybe)} that the server may have accepted before a kill (never merged into "
                     "a newer status mail; resent with the same Message-ID)")
        out.append(Check(status, "spool", text))
    orphans = [p for p in Spool(d).orphans() if now.timestamp() - p.stat().st_mtime >= ORPHAN_AGE]
    if orphans:
        out.append(Check(NOTE, "spool", f"{len(orphans)} metadata file(s) without their mail ("
                                        f"{', '.join(p.name for p in orphans[:3])}"
                                        f"{' ...' if len(orphans) > 3 else ''}): left by a run killed while "
                                        "removing a sent mail; harmless, never sent; `pbem spool clean` "
                                        "removes them"))
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
                         + ". If an address is wrong: `pbem player set-address GAME PLAYER ADDRESS`"))
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


def _lock_age(path: Path, pid: int, now: datetime) -> float | None:
    """Seconds process ``pid`` has held the cycle lock ``path``: since the time the
    cycle wrote in ``cycle.owner`` when that names ``pid``, else since the process
    started (``/proc/PID/stat``); None when neither is known."""
    try:
        owner = json.loads((path.parent / OWNER).read_text())
        if int(owner["pid"]) == pid:
            since = _parse_time(owner["at"])
            if since is not None:
                return (now - since).total_seconds()
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return uptime - ticks / os.sysconf("SC_CLK_TCK")


def check_lock(config: Config, now: datetime | None = None) -> Check:
    """The cycle lock (``spool/cycle.lock``, an flock): free, or held by which
    process (read from ``/proc/locks``) and for how long (``_lock_age``); FAIL
    when held longer than ``LOCK_STUCK_AFTER``.  The lock is tried, never kept."""
    now = now or datetime.now(timezone.utc)
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
            age = _lock_age(path, pid, now)
            held = f" for {_ago(age)}" if age is not None else ""
            if age is not None and age > LOCK_STUCK_AFTER:
                return Check(FAIL, "cycle lock",
                             f"held by process {pid} ({alive}{': ' + cmd if cmd else ''}){held}, longer than "
                             f"{_ago(LOCK_STUCK_AFTER)}: that cycle hangs and no other can run. Stop it "
                             f"(`kill {pid}`; `kill -9 {pid}` if it stays) and run `pbem doctor` again")
            return Check(NOTE, "cycle lock",
                         f"held by process {pid} ({alive}{': ' + cmd if cmd else ''}){held}: a cycle is "
                         f"running now (it fails after {_ago(LOCK_STUCK_AFTER)})")
        except OSError as exc:
            return Check(FAIL, "cycle lock", f"{path} cannot be locked: {describe_error(exc)}")
        fcntl.flock(fd, fcntl.LOCK_UN)
        return Check(OK, "cycle lock", "free (no cycle is running)")
    finally:
        os.close(fd)


def check_disk(config: Config, min_free: int = MIN_FREE_BYTES,
               min_fraction: float = MIN_FREE_FRACTION) -> list[Check]:
    """Free space on each file system holding the games, the spool and the
    bookkeeping database (one line per file system): FAIL when less than
    ``min_free`` bytes or ``min_fraction`` of it is free (a cycle that cannot
    write stops, and keeps the mail for later)."""
    places: dict[int, tuple[list[str], Path]] = {}
    for what, where in (("games", Path(config.games_dir)), ("spool and bookkeeping", Path(config.spool_dir))):
        existing = next((p for p in (where, *where.parents) if p.exists()), None)
        if existing is None:
            continue
        places.setdefault(os.stat(existing).st_dev, ([], existing))[0].append(f"{what} ({where})")
    out = []
    for names, path in places.values():
        try:
            usage = shutil.disk_usage(path)
        except OSError as exc:
            out.append(Check(FAIL, "disk space", f"cannot tell for {path}: {describe_error(exc)}"))
            continue
        free, share = usage.free, usage.free / usage.total if usage.total else 0.0
        text = f"{_size(free)} free ({share:.1%}) for {' and '.join(names)}"
        if free < min_free or share < min_fraction:
            out.append(Check(FAIL, "disk space", f"only {text}: under {_size(min_free)} or {min_fraction:.0%}, "
                                                 "a cycle may fail to save a game or spool a mail; free some space"))
        else:
            out.append(Check(OK, "disk space", text))
    return out


def _size(n: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


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
                    bounces=bk.bounces(), pending_moves=bk.pending_moves(), seats=bk.bounced_seats()), None
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
        if gap < -60:
            # a cycle run with `pbem run --now` ahead of this clock
            out.append(Check(NOTE, "last successful cycle",
                             f"{last.isoformat(timespec='seconds')}, {_ago(-gap)} after this check's clock "
                             f"({now.isoformat(timespec='seconds')}): a cycle was run with --now ahead of "
                             "the real time; `pbem doctor --now TIMESTAMP` checks at that time"))
        else:
            status = FAIL if gap > config.outage_after else OK
            out.append(Check(status, "last successful cycle",
                             f"{last.isoformat(timespec='seconds')}, {_ago(gap)} ago (outage_after: {hours:g} hours)"
                             + ("; the next status mails will say that the moderator was away"
                                if status == FAIL else "")))
    return out + _memory_rest(state, now)


def _memory_rest(state, now: datetime) -> list[Check]:
    """The memory checks after the last successful cycle: SMTP failing, bounced
    addresses, handled mails not moved out of the inbox."""
    out = []
    failing = state.smtp_failing_since
    if failing is not None:
        out.append(Check(FAIL, "outgoing mail",
                         f"the SMTP server has accepted nothing since {failing.isoformat(timespec='seconds')} "
                         f"({_ago((now - failing).total_seconds())} ago); the mails wait in the spool"))
    seats = getattr(state, "seats", {})

    def seat(address: str) -> str:
        return f" ({seats[address]})" if address in seats else ""

    if state.bounces:
        out.append(Check(NOTE, "bounced addresses",
                         "; ".join(f"{a}{seat(a)}: {r}" for a, r in sorted(state.bounces.items()))))
    if state.pending_moves:
        out.append(Check(NOTE, "inbox", f"{len(state.pending_moves)} handled mail(s) could not be moved out "
                                        "of the inbox yet; the next cycle moves them"))
    return out


def check_open_games(config: Config, now: datetime) -> list[Check]:
    """The games open for sign-up and the registry of people (the bookkeeping
    database's schema 3 and 4, read-only; ``moderation/signup.py``): one NOTE per open
    game (seats taken, waiting list, start rule, expiry; FAIL for one past its
    expiry by more than an hour, which a running cycle would have closed) and
    the number of registered people; the substitute pool (``_check_pool``).  Nothing when there is no database or it
    cannot be read (``check_state`` says so)."""
    db = Path(config.spool_dir) / DB_NAME
    if not db.exists():
        return []
    try:
        with Bookkeeping(db, readonly=True, legacy=None) as bk:
            out = []
            for og in bk.open_games():
                setup, expires = og["setup"], og["expires"]
                taken = len(bk.signups(og["id"], ["seated"]))
                waiting = len(bk.signups(og["id"], ["waiting", "offered"]))
                late = (now - expires).total_seconds() > 3600
                out.append(Check(FAIL if late else NOTE, "open game",
                                 f"{og['id']} ({og['state']}): {taken} of {setup['seats'][0]}-{setup['seats'][1]} "
                                 f"seats taken, {waiting} waiting, starts {setup['starts']}, expires "
                                 f"{expires.isoformat(timespec='minutes')}"
                                 + ("; past its expiry: is `pbem run` running?" if late else "")))
            people = bk.people()
            if people or out:
                out.append(Check(NOTE, "registry", f"{len(people)} address(es) confirmed by a reply"))
            out += _check_pool(bk, now)
            return out
    except (BookkeepingError, sqlite3.Error):
        return []


def _check_pool(bk: Bookkeeping, now: datetime) -> list[Check]:
    """The substitute pool (schema 4, ``moderation/pool.py``): a NOTE with the
    volunteers and the seats waiting for a substitute; FAIL for a round of
    offers lapsed more than an hour ago (a running cycle would have sent the
    next round); FAIL for a volunteer not in the registry (the pool holds only
    addresses confirmed by a reply)."""
    out = []
    members = bk.pool_addresses()
    registered = {p["address"] for p in bk.people()}
    strays = [a for a in members if a not in registered]
    open_ = bk.vacancies(("open", "gm"))
    if members or open_:
        out.append(Check(NOTE, "substitute pool", f"{len(members)} volunteer(s); {len(open_)} seat(s) waiting "
                                                  "for a substitute"
                         + "".join(f"; {v['game']} {v['seat']} ({v['state']}, round {v['round']})" for v in open_)))
    if strays:
        out.append(Check(FAIL, "substitute pool", f"{len(strays)} volunteer(s) not in the registry of people: "
                                                  "the database was changed by hand"))
    late = [v for v in open_ if v["state"] == "open" and v["round_ends"] is not None
            and (now - v["round_ends"]).total_seconds() > 3600]
    if late:
        out.append(Check(FAIL, "substitute pool", "the offers of " + ", ".join(f"{v['game']} {v['seat']}" for v in late)
                         + " lapsed over an hour ago and no next round went: is `pbem run` running?"))
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
    checks += check_oauth(config)
    checks += check_imap(config)
    checks.append(check_smtp(config))
    for extra in (check_sender(config), check_daily_limit(config, now), check_smtp_limit(config, now)):
        if extra is not None:
            checks.append(extra)
    checks += check_spool(config, now)
    checks += check_disk(config)
    checks.append(check_lock(config, now))
    checks += check_state(config, now)
    checks += check_open_games(config, now)
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
