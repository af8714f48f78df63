"""Real mail servers on loopback for the tests: Dovecot (IMAP) and an aiosmtpd sink.

- :class:`Dovecot` runs a private Dovecot (Debian's ``dovecot-imapd``) as
  root with its own configuration in a temporary directory, listening on
  127.0.0.1 only. Any user name logs in with :attr:`Dovecot.password`; each
  user gets a fresh Maildir home, so :meth:`Dovecot.new_user` is how tests
  get an empty account without restarting the server.
- :class:`Courier` runs a private Courier-IMAP (Debian's ``courier-imap``)
  the same way: its own authdaemon and userdb in a private mount namespace,
  folders under ``INBOX.`` as on a stock Courier.
- :class:`Postfix` runs a private Postfix (Debian's ``postfix``): a
  submission port with STARTTLS and AUTH (SASL by a Dovecot), delivering
  into that Dovecot's Maildirs.
- :class:`SmtpSink` wraps aiosmtpd's ``Controller`` on 127.0.0.1 and records
  every accepted message.
- :func:`make_certificate` makes a self-signed certificate for 127.0.0.1 /
  localhost (with the ``openssl`` command) for the TLS variants of both.
"""

from __future__ import annotations

import atexit
import base64
import email
import email.policy
import itertools
import json
import os
import pwd
import re
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import textwrap
import threading
import time
import warnings
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path

import imapclient
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

LOOPBACK = "127.0.0.1"

INSTALL_HINT = "run `bash .ci/run` (or `apt-get install -y dovecot-imapd`)"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float, greeting: bytes | None = None) -> None:
    """Wait until 127.0.0.1:``port`` accepts a connection (and, if given,
    sends a first line starting with ``greeting``). Raises TimeoutError."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((LOOPBACK, port), timeout=1) as sock:
                if greeting is None:
                    return
                line = sock.makefile("rb").readline()
                if line.startswith(greeting):
                    return
                last = RuntimeError(f"unexpected greeting {line!r}")
        except OSError as exc:
            last = exc
        time.sleep(0.02)
    raise TimeoutError(f"nothing answered on {LOOPBACK}:{port} within {timeout}s ({last})")


# --------------------------------------------------------------------------
# TLS
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Certificate:
    """A self-signed test certificate: PEM files and contexts using them."""

    cert_path: Path
    key_path: Path

    def server_context(self) -> ssl.SSLContext:
        """A server-side context presenting this certificate."""
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(self.cert_path, self.key_path)
        return ctx

    def client_context(self) -> ssl.SSLContext:
        """A client-side context that trusts only this certificate (with
        host name checking, valid for 127.0.0.1 and localhost)."""
        return ssl.create_default_context(cafile=str(self.cert_path))


def make_certificate(directory: Path) -> Certificate:
    """Write ``cert.pem``/``key.pem`` (EC P-256, 2 days, SAN 127.0.0.1 and
    localhost) into ``directory``. Raises RuntimeError if openssl is missing
    or fails."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError(f"the openssl command is missing: {INSTALL_HINT.replace('dovecot-imapd', 'openssl')}")
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "2", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
         "-keyout", str(key), "-out", str(cert)],
        check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, timeout=30,
    )
    os.chmod(key, 0o600)
    return Certificate(cert, key)


# --------------------------------------------------------------------------
# Dovecot
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredMessage:
    """A message as the IMAP server holds it."""

    uid: int
    flags: tuple[bytes, ...]
    raw: bytes


class PrivateServer:
    """What the private test servers (Dovecot, Courier, Postfix) share: a
    temporary directory ``_dir``, ``start()``/``stop(timeout=...)`` supplied by
    the server, a stop at interpreter exit while running, and use as a context
    manager (``with Dovecot() as d: ...``)."""

    _dir: Path | None = None

    def cleanup(self) -> None:
        """Stop and delete the temporary directory."""
        self.stop()
        atexit.unregister(self._stop_at_exit)
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def _stop_at_exit(self) -> None:
        try:
            self.stop(timeout=5)
        except Exception:  # pragma: no cover - best effort at interpreter exit
            pass

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.cleanup()


class ImapAccounts:
    """What the test IMAP servers share: reaching an account (plain IMAP on
    :attr:`port` of :attr:`host`, :attr:`username`/:attr:`password`) to look
    at it or put mail in, independently of the code under test."""

    host: str
    port: int | None
    username: str
    password: str

    def inbox_kwargs(self, username: str | None = None) -> dict:
        """Keyword arguments for ``ImapInbox`` on the plain port."""
        return {"host": self.host, "port": self.port, "username": username or self.username,
                "password": self.password, "security": "none"}

    def connect(self, username: str | None = None) -> imapclient.IMAPClient:
        """A logged-in imapclient connection (plain port); caller logs out."""
        client = imapclient.IMAPClient(self.host, port=self.port, ssl=False, timeout=10)
        client.login(username or self.username, self.password)
        return client

    def append(self, raw: bytes, folder: str = "INBOX", *, flags: tuple = (),
               username: str | None = None, msg_time=None) -> int:
        """APPEND ``raw`` to ``folder`` (created if missing); returns its UID.
        ``msg_time``: an aware ``datetime``, the mail's INTERNALDATE (when it
        reached the mailbox; default: now)."""
        client = self.connect(username)
        try:
            if not client.folder_exists(folder):
                client.create_folder(folder)
            response = client.append(folder, raw, flags=flags, msg_time=msg_time)
        finally:
            client.logout()
        match = re.search(rb"APPENDUID \d+ (\d+)", response)
        if not match:
            raise RuntimeError(f"no APPENDUID in {response!r}")
        return int(match.group(1))

    def messages(self, folder: str = "INBOX", username: str | None = None) -> list[StoredMessage]:
        """The messages in ``folder`` in UID order (read-only, BODY.PEEK)."""
        client = self.connect(username)
        try:
            client.select_folder(folder, readonly=True)
            uids = sorted(client.search("ALL"))
            data = client.fetch(uids, ["FLAGS", "BODY.PEEK[]"]) if uids else {}
        finally:
            client.logout()
        return [StoredMessage(uid, tuple(data[uid][b"FLAGS"]), bytes(data[uid][b"BODY[]"]))
                for uid in uids]

    def uidvalidity(self, folder: str = "INBOX", username: str | None = None) -> int:
        """The folder's UIDVALIDITY."""
        client = self.connect(username)
        try:
            return int(client.folder_status(folder, ["UIDVALIDITY"])[b"UIDVALIDITY"])
        finally:
            client.logout()

    def folders(self, username: str | None = None) -> list[str]:
        """The account's folder names, sorted."""
        client = self.connect(username)
        try:
            return sorted(name for _, _, name in client.list_folders())
        finally:
            client.logout()


class Dovecot(PrivateServer, ImapAccounts):
    """A private Dovecot IMAP server on 127.0.0.1, run as root.

    ``Dovecot(tls=None, password="secret", imap_capability=None)``

    - ``tls``: a :class:`Certificate`; when given, ``ssl = yes``, the plain
      port also offers STARTTLS and :attr:`ssl_port` speaks implicit TLS.
      Without it ``ssl = no`` and :attr:`ssl_port` is None.
    - ``imap_capability``: replaces the advertised capability list (Dovecot's
      ``imap_capability`` setting), e.g. to hide MOVE from clients.
    - ``oauth2_introspection``: an RFC 7662 introspection URL (see
      ``tests/oauth_server.py``); when given, SASL XOAUTH2 and OAUTHBEARER
      are offered and checked by an ``oauth2`` passdb asking that URL (the
      token's ``username`` must be the login name).
    - ``sasl_socket``: also offer the authentication service to other servers
      on :attr:`sasl_path` (``run/auth-sasl``, mode 0666): Postfix's SASL
      (``smtpd_sasl_type = dovecot``) checks SMTP logins there.

    Everything lives in a fresh ``/tmp/pbem-dovecot-*`` directory (mode 0755
    so the ``dovecot``/``dovenull`` users can reach it): ``dovecot.conf``,
    ``run/`` (base_dir), ``state/``, ``dovecot.log`` and ``home/USER/Maildir``.
    Start takes about 0.1 s, stop about 2.5 s (Dovecot's master lingers).

    Raises RuntimeError from :meth:`start` when the ``dovecot`` binary is
    missing or the server does not come up (the log tail is in the message).
    """

    def __init__(
        self,
        *,
        tls: Certificate | None = None,
        password: str = "secret",
        imap_capability: str | None = None,
        oauth2_introspection: str | None = None,
        sasl_socket: bool = False,
    ) -> None:
        self.oauth2_introspection = oauth2_introspection
        self.host = LOOPBACK
        self.password = password
        self.tls = tls
        self.imap_capability = imap_capability
        self.sasl_socket = sasl_socket
        self.port: int | None = None
        self.ssl_port: int | None = None
        self.username = "moderator"
        self._users = itertools.count(1)
        self._dir: Path | None = None
        self._pid: int | None = None

    # -- paths -------------------------------------------------------------

    @property
    def directory(self) -> Path:
        if self._dir is None:
            raise RuntimeError("Dovecot has not been started")
        return self._dir

    @property
    def config_path(self) -> Path:
        return self.directory / "dovecot.conf"

    @property
    def log_path(self) -> Path:
        return self.directory / "dovecot.log"

    def home(self, username: str | None = None) -> Path:
        """The home directory of ``username`` (its mail is in ``Maildir/``)."""
        return self.directory / "home" / (username or self.username)

    def log_text(self) -> str:
        """Everything Dovecot has logged so far."""
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    # -- lifecycle -------------------------------------------------------

    def _write_config(self) -> None:
        dovecot_uid = pwd.getpwnam("dovecot").pw_uid
        d = self.directory
        if self.tls is not None:
            ssl_lines = textwrap.dedent(f"""\
                ssl = yes
                ssl_cert = <{self.tls.cert_path}
                ssl_key = <{self.tls.key_path}
                """)
            imaps = f"inet_listener imaps {{\n    address = {LOOPBACK}\n    port = {self.ssl_port}\n    ssl = yes\n  }}"
        else:
            ssl_lines = "ssl = no\n"
            imaps = "inet_listener imaps {\n    port = 0\n  }"
        capability = (f"imap_capability = {self.imap_capability}\n"
                      if self.imap_capability else "")
        mechanisms, oauth2_passdb, static_mechanisms = "plain login", "", ""
        if self.oauth2_introspection:
            mechanisms = "plain login xoauth2 oauthbearer"
            (d / "oauth2.conf.ext").write_text(textwrap.dedent(f"""\
                introspection_mode = post
                introspection_url = {self.oauth2_introspection}
                username_attribute = username
                active_attribute = active
                active_value = true
                """))
            oauth2_passdb = textwrap.dedent(f"""\
                passdb {{
                  driver = oauth2
                  mechanisms = xoauth2 oauthbearer
                  args = {d}/oauth2.conf.ext
                }}
                """)
            static_mechanisms = "\n  mechanisms = plain login"
        self.config_path.write_text(textwrap.dedent(f"""\
            # Written by tests/servers.py: a private Dovecot for the tests.
            base_dir = {d}/run
            state_dir = {d}/state
            log_path = {d}/dovecot.log
            protocols = imap
            listen = {LOOPBACK}
            disable_plaintext_auth = no
            auth_mechanisms = {mechanisms}
            auth_failure_delay = 0
            default_login_user = dovenull
            default_internal_user = dovecot
            first_valid_uid = {dovecot_uid}
            mail_location = maildir:~/Maildir
            """) + ssl_lines + capability + textwrap.dedent(f"""\
            service imap-login {{
              inet_listener imap {{
                address = {LOOPBACK}
                port = {self.port}
              }}
              {imaps}
            }}
            # No growing delay for clients after failed logins (tests log in
            # with wrong passwords on purpose).
            service anvil {{
              unix_listener anvil-auth-penalty {{
                mode = 0
              }}
            }}
            {self._sasl_service()}
            passdb {{
              driver = static
              args = password={self.password}{static_mechanisms}
            }}
            userdb {{
              driver = static
              args = uid=dovecot gid=dovecot home={d}/home/%u
            }}
            """) + oauth2_passdb)

    @property
    def sasl_path(self) -> Path:
        """The authentication socket for Postfix (with ``sasl_socket=True``)."""
        return self.directory / "run" / "auth-sasl"

    def _sasl_service(self) -> str:
        if not self.sasl_socket:
            return ""
        return ("service auth {\n  unix_listener auth-sasl {\n    mode = 0666\n  }\n}")

    def start(self, timeout: float = 15) -> None:
        """Start the server (ports are chosen on the first start and kept)."""
        binary = shutil.which("dovecot") or (
            "/usr/sbin/dovecot" if os.path.exists("/usr/sbin/dovecot") else None)
        if binary is None:
            raise RuntimeError(f"the dovecot binary is missing: {INSTALL_HINT}")
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="pbem-dovecot-"))
            os.chmod(self._dir, 0o755)
            home = self._dir / "home"
            home.mkdir()
            shutil.chown(home, "dovecot", "dovecot")
            self.port = free_port()
            self.ssl_port = free_port() if self.tls is not None else None
            self._write_config()
        else:
            stale = self._read_pid()
            if stale is not None and _alive(stale):  # a master we lost track of
                self._pid = stale
                self.stop()
        with open(self.directory / "start.out", "ab") as out:
            # Dovecot's daemon keeps the stdout it was given; never a pipe.
            proc = subprocess.run([binary, "-c", str(self.config_path)],
                                  stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                  timeout=timeout)
        if proc.returncode != 0:
            output = (self.directory / "start.out").read_text(errors="replace")
            raise RuntimeError(f"dovecot -c {self.config_path} exited {proc.returncode}:\n"
                               f"{output[-3000:]}\n{self.log_text()[-3000:]}")
        self._binary = binary
        atexit.unregister(self._stop_at_exit)  # once, however often restarted
        atexit.register(self._stop_at_exit)
        try:
            wait_for_port(self.port, timeout, greeting=b"* OK")
            if self.ssl_port is not None:
                wait_for_port(self.ssl_port, timeout)
        except TimeoutError as exc:
            self._pid = self._read_pid()
            self.stop()
            raise RuntimeError(f"Dovecot did not come up: {exc}\n{self.log_text()[-3000:]}") from exc
        # the daemon writes master.pid itself, possibly after `dovecot` returned:
        # read it once the server answers
        self._pid = self._read_pid()

    def _read_pid(self) -> int | None:
        try:
            return int((self.directory / "run" / "master.pid").read_text())
        except (OSError, ValueError):
            return None

    @property
    def running(self) -> bool:
        return self._pid is not None and _alive(self._pid)

    def stop(self, timeout: float = 20) -> None:
        """Stop the server (``dovecot -c CONFIG stop``) and wait for its master
        process to exit. Mail and configuration are kept for :meth:`start`."""
        if self._pid is None and self._dir is not None:
            self._pid = self._read_pid()  # started, but the pid was not read yet
        if self._pid is None:
            return
        pid, self._pid = self._pid, None
        if _alive(pid):
            subprocess.run([self._binary, "-c", str(self.config_path), "stop"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=timeout)
        deadline = time.monotonic() + timeout
        while _alive(pid):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                time.sleep(0.1)
                break
            time.sleep(0.02)

    def restart(self) -> None:
        """Stop and start again on the same ports, keeping all mail."""
        self.stop()
        self.start()

    def kick(self, username: str | None = None) -> None:
        """Close every connection of ``username`` from the server's side
        (``doveadm kick``; a restart leaves the logged-in sessions running)."""
        subprocess.run(["doveadm", "-c", str(self.config_path), "kick", username or self.username],
                       check=True, stdin=subprocess.DEVNULL, capture_output=True, timeout=30)

    # -- accounts and mail --------------------------------------------------

    def new_user(self, prefix: str = "user") -> str:
        """Switch :attr:`username` to a never-used account and return its name."""
        self.username = f"{prefix}{next(self._users)}"
        return self.username

    def remove_user(self, username: str | None = None) -> None:
        """Delete an account's home (its mail)."""
        shutil.rmtree(self.home(username), ignore_errors=True)

def _in_namespace(namespace: str) -> list[int]:
    """The processes whose mount namespace is ``namespace`` (``"mnt:[N]"``)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/ns/mnt") == namespace:
                    found.append(int(entry))
            except OSError:
                pass
    return found


def _alive(pid: int) -> bool:
    """Is ``pid`` a live (not zombie) process?"""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            state = stat.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


# --------------------------------------------------------------------------
# Courier-IMAP
# --------------------------------------------------------------------------

COURIER_HINT = "run `bash .ci/run`"
#: Where Courier-IMAP's own files are: Debian's ``courier-imap`` conflicts with
#: ``dovecot-imapd`` (both provide and conflict with ``imap-server``), so
#: ``.ci/run`` installs Courier's other packages and unpacks ``courier-imap``
#: into this folder (``dpkg-deb -x``) instead of installing it; an installed
#: ``courier-imap`` (``/usr/bin/imapd``) is used as it is.
COURIER_IMAP_ROOT = os.environ.get("PBEM_COURIER_IMAP_ROOT") or (
    "" if os.path.exists("/usr/bin/imapd") else "/opt/pbem-courier-imap")
COURIER_IMAPLOGIN = f"{COURIER_IMAP_ROOT}/usr/lib/courier/courier/imaplogin"
COURIER_IMAPD = f"{COURIER_IMAP_ROOT}/usr/bin/imapd"
COURIER_BINARIES = ("/usr/sbin/couriertcpd", COURIER_IMAPLOGIN, COURIER_IMAPD,
                    "/usr/lib/courier/courier-authlib/authdaemond", "/usr/sbin/makeuserdb")
#: Courier's own default capability list (Debian's /etc/courier/imapd).
COURIER_CAPABILITY = "IMAP4rev1 UIDPLUS CHILDREN NAMESPACE THREAD=ORDEREDSUBJECT THREAD=REFERENCES SORT QUOTA IDLE"


class Courier(PrivateServer, ImapAccounts):
    """A private Courier-IMAP server on 127.0.0.1, run as root (plain IMAP only).

    ``Courier(password="secret", imap_capability=COURIER_CAPABILITY)``

    Courier's login reads its users from an authdaemon whose socket
    (``/run/courier/authdaemon/socket``) and configuration (``/etc/courier``)
    are compiled in. So the server runs in a private mount namespace
    (``unshare --mount``) where a fresh ``/tmp/pbem-courier-*`` directory's
    ``etc/`` (``authdaemonrc`` with the ``authuserdb`` module, ``userdb``) is
    ``/etc/courier`` and its ``authdaemon/`` is the socket directory; the
    system's files and any system Courier are never touched. Users are in
    ``userdb`` (uid ``courier``, home ``home/USER``, ``Maildir`` made with
    ``maildirmake``); :meth:`new_user` adds one. imapd starts gamin's
    ``gam_server``, which leaves the process group: :meth:`stop` ends every
    process in the instance's mount namespace. ``couriertcpd`` gets its
    settings from the environment, as Courier's start script gives them.

    Raises RuntimeError from :meth:`start` when Courier is not installed,
    ``unshare`` fails or the server does not come up.
    """

    def __init__(self, *, password: str = "secret",
                 imap_capability: str = COURIER_CAPABILITY) -> None:
        self.host = LOOPBACK
        self.password = password
        self.imap_capability = imap_capability
        self.port: int | None = None
        self.username = "moderator"
        self._users = itertools.count(1)
        self._known: list[str] = []
        self._dir: Path | None = None
        self._proc: subprocess.Popen | None = None

    @property
    def directory(self) -> Path:
        if self._dir is None:
            raise RuntimeError("Courier has not been started")
        return self._dir

    def home(self, username: str | None = None) -> Path:
        """The home directory of ``username`` (its mail is in ``Maildir/``)."""
        return self.directory / "home" / (username or self.username)

    def log_text(self) -> str:
        """What authdaemond and couriertcpd wrote so far."""
        try:
            return (self.directory / "courier.log").read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def _add_user(self, username: str) -> None:
        """Give ``username`` a Maildir and a userdb entry (and rebuild userdb.dat)."""
        courier = pwd.getpwnam("courier")
        home = self.home(username)
        home.mkdir(parents=True, exist_ok=True)
        subprocess.run(["maildirmake.courier", str(home / "Maildir")], check=True,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        for path in [home, *home.rglob("*")]:
            os.chown(path, courier.pw_uid, courier.pw_gid)
        self._known.append(username)
        crypted = subprocess.run(["openssl", "passwd", "-1", "-stdin"], input=self.password.encode(),
                                 check=True, capture_output=True, timeout=30).stdout.decode().strip()
        userdb = self.directory / "etc" / "userdb"
        lines = "".join(f"{user}\tuid={courier.pw_uid}|gid={courier.pw_gid}|home={self.home(user)}"
                        f"|mail={self.home(user)}/Maildir|systempw={crypted}\n" for user in self._known)
        userdb.write_text(lines)
        os.chmod(userdb, 0o600)
        subprocess.run(["/usr/sbin/makeuserdb", "-f", str(userdb)], check=True,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=30)

    def start(self, timeout: float = 15) -> None:
        """Start authdaemond and couriertcpd (the port is chosen on the first start)."""
        missing = [b for b in COURIER_BINARIES if not os.path.exists(b)]
        if missing:
            raise RuntimeError(f"Courier-IMAP is not installed ({', '.join(missing)} missing): {COURIER_HINT}")
        if shutil.which("unshare") is None:
            raise RuntimeError("the unshare command (util-linux) is missing")
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="pbem-courier-"))
            os.chmod(self._dir, 0o755)
            (self._dir / "etc").mkdir()
            (self._dir / "authdaemon").mkdir(mode=0o750)
            (self._dir / "home").mkdir()
            (self._dir / "etc" / "authdaemonrc").write_text(textwrap.dedent("""\
                # Written by tests/servers.py: a private Courier authdaemon for the tests.
                authmodulelist="authuserdb"
                authmodulelistorig="authuserdb"
                daemons=2
                authdaemonvar=/run/courier/authdaemon
                DEBUG_LOGIN=0
                DEFAULTOPTIONS=""
                LOGGEROPTS=""
                """))
            self.port = free_port()
            self._add_user(self.username)
        d = self.directory
        settings = {
            "PATH": "/usr/bin:/bin:/usr/sbin:/sbin",
            "IMAP_CAPABILITY": self.imap_capability,
            "IMAP_KEYWORDS": "1", "IMAP_ACL": "1", "IMAP_USELOCKS": "1", "IMAP_UMASK": "022",
            "IMAP_ENHANCEDIDLE": "0", "IMAP_IDLE_TIMEOUT": "5", "IMAP_CHECK_ALL_FOLDERS": "0",
            "IMAP_MAILBOX_SANITY_CHECK": "1", "IMAP_TRASHFOLDERNAME": "Trash",
            "IMAP_MOVE_EXPUNGE_TO_TRASH": "0", "IMAP_EMPTYTRASH": "",
        }
        script = textwrap.dedent(f"""\
            set -e
            mkdir -p /run/courier/authdaemon
            mount --bind {d}/etc /etc/courier
            mount --bind {d}/authdaemon /run/courier/authdaemon
            # imapd would start gamin's server, which leaves the process group
            # and outlives the test: without it imapd looks at the Maildir itself
            /usr/lib/courier/courier-authlib/authdaemond &
            exec /usr/sbin/couriertcpd -address={LOOPBACK} -nodnslookup -noidentlookup \\
                -maxprocs=40 -maxperip=40 {self.port} \\
                {COURIER_IMAPLOGIN} {COURIER_IMAPD} Maildir
            """)
        (d / "start.sh").write_text(script)
        with open(d / "courier.log", "ab") as out:
            self._proc = subprocess.Popen(
                ["unshare", "--mount", "--propagation", "private", "sh", str(d / "start.sh")],
                stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=settings,
                start_new_session=True)
        atexit.unregister(self._stop_at_exit)
        atexit.register(self._stop_at_exit)
        try:
            wait_for_port(self.port, timeout, greeting=b"* OK")
            deadline = time.monotonic() + timeout
            while not (d / "authdaemon" / "socket").exists():  # logins need authdaemond
                if time.monotonic() > deadline or self._proc.poll() is not None:
                    raise TimeoutError("authdaemond made no socket")
                time.sleep(0.02)
        except TimeoutError as exc:
            self.stop()
            raise RuntimeError(f"Courier did not come up: {exc}\n{self.log_text()[-3000:]}") from exc

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def stop(self, timeout: float = 10) -> None:
        """Stop every process of the server (its process group). Mail is kept."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            namespace = os.readlink(f"/proc/{proc.pid}/ns/mnt")
        except OSError:
            namespace = None
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout)
        deadline = time.monotonic() + timeout  # the group's other members
        while time.monotonic() < deadline:
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.02)
        if namespace is not None and namespace != os.readlink("/proc/self/ns/mnt"):
            for pid in _in_namespace(namespace):  # gam_server started by imapd
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        try:
            (self.directory / "authdaemon" / "socket").unlink()
        except FileNotFoundError:
            pass

    def restart(self) -> None:
        """Stop and start again on the same port, keeping all mail."""
        self.stop()
        self.start()

    def new_user(self, prefix: str = "user") -> str:
        """Add a never-used account, switch :attr:`username` to it and return its name."""
        username = f"{prefix}{next(self._users)}"
        self._add_user(username)
        self.username = username
        return username

    def remove_user(self, username: str | None = None) -> None:
        """Delete an account's mail (the login stays)."""
        shutil.rmtree(self.home(username) / "Maildir", ignore_errors=True)


# --------------------------------------------------------------------------
# Postfix
# --------------------------------------------------------------------------

POSTFIX_HINT = "run `bash .ci/run` (or `apt-get install -y postfix`)"


class Postfix(PrivateServer):
    """A private Postfix on 127.0.0.1 delivering into a :class:`Dovecot`'s Maildirs.

    ``Postfix(dovecot, tls, mailboxes)``: ``dovecot`` must have been made
    with ``sasl_socket=True`` (SMTP logins are checked by its passdb: any user
    name with its password); ``tls`` is the :class:`Certificate` the
    submission port presents; ``mailboxes`` maps each address to the Dovecot
    user whose Maildir gets its mail (Postfix's ``virtual`` agent, as the
    ``dovecot`` user): ``{"ada@players.example": "ada"}`` delivers into
    ``dovecot.home("ada")/Maildir``. Other addresses of those domains are
    refused; nothing is relayed anywhere else.

    :attr:`port` is a submission port (RFC 6409) that requires STARTTLS before
    AUTH and AUTH before MAIL. Everything lives in a fresh
    ``/tmp/pbem-postfix-*``: ``etc/`` (``main.cf``, ``master.cf``: the
    configuration directory, ``postfix -c``), ``queue/``, ``data/`` and
    ``postfix.log``. The system's ``/etc/postfix`` and any system Postfix are
    not used. :meth:`wait_delivered` waits until the queue is empty.

    Raises RuntimeError from :meth:`start` when Postfix is not installed or
    does not come up (the log tail is in the message).
    """

    def __init__(self, dovecot: "Dovecot", tls: Certificate, mailboxes: dict[str, str]) -> None:
        self.host = LOOPBACK
        self.dovecot = dovecot
        self.tls = tls
        self.mailboxes = dict(mailboxes)
        self.domains = tuple(sorted({a.rsplit("@", 1)[1] for a in self.mailboxes}))
        self.port: int | None = None
        self._dir: Path | None = None

    @property
    def directory(self) -> Path:
        if self._dir is None:
            raise RuntimeError("Postfix has not been started")
        return self._dir

    def log_text(self) -> str:
        try:
            return (self.directory / "postfix.log").read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def _postfix(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        # postfix writes its errors to stderr only when that is a terminal; they
        # are in postfix.log (maillog_file) instead
        return subprocess.run(["/usr/sbin/postfix", "-c", str(self.directory / "etc"), *args],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)

    def _write_config(self) -> None:
        d = self.directory
        etc = d / "etc"
        for name in ("dynamicmaps.cf", "postfix-files"):
            if (Path("/etc/postfix") / name).exists():
                shutil.copy(Path("/etc/postfix") / name, etc / name)
        for name in ("dynamicmaps.cf.d", "postfix-files.d"):
            if (Path("/etc/postfix") / name).is_dir():
                shutil.copytree(Path("/etc/postfix") / name, etc / name)
        dovecot = pwd.getpwnam("dovecot")
        (etc / "virtual-mailboxes").write_text(
            "".join(f"{address} {user}/Maildir/\n" for address, user in self.mailboxes.items()))
        (etc / "main.cf").write_text(textwrap.dedent(f"""\
            # Written by tests/servers.py: a private Postfix for the tests.
            compatibility_level = 3.6
            queue_directory = {d}/queue
            data_directory = {d}/data
            meta_directory = {etc}
            maillog_file = {d}/postfix.log
            maillog_file_prefixes = {d}
            inet_interfaces = {LOOPBACK}
            inet_protocols = ipv4
            myhostname = mail.test.example
            mydestination =
            mynetworks = {LOOPBACK}/32
            relayhost =
            default_transport = error:this test server delivers to its own domains only
            relay_domains =
            smtputf8_enable = no
            biff = no
            virtual_mailbox_domains = {" ".join(self.domains)}
            virtual_mailbox_base = {self.dovecot.directory / "home"}
            virtual_mailbox_maps = texthash:{etc}/virtual-mailboxes
            virtual_minimum_uid = 1
            virtual_uid_maps = static:{dovecot.pw_uid}
            virtual_gid_maps = static:{dovecot.pw_gid}
            smtpd_tls_cert_file = {self.tls.cert_path}
            smtpd_tls_key_file = {self.tls.key_path}
            smtpd_sasl_type = dovecot
            smtpd_sasl_path = {self.dovecot.sasl_path}
            """))
        master = textwrap.dedent(f"""\
            # service type private unpriv chroot wakeup maxproc command
            {LOOPBACK}:{self.port} inet n - n - - smtpd
              -o syslog_name=postfix/submission
              -o smtpd_tls_security_level=encrypt
              -o smtpd_sasl_auth_enable=yes
              -o smtpd_tls_auth_only=yes
              -o smtpd_client_restrictions=permit_sasl_authenticated,reject
              -o smtpd_relay_restrictions=permit_sasl_authenticated,reject
              -o smtpd_recipient_restrictions=permit_sasl_authenticated,reject
            """)
        for line in Path("/etc/postfix/master.cf").read_text().splitlines(keepends=True):
            if line.split()[:2] != ["smtp", "inet"]:  # no listener on port 25
                master += line
        (etc / "master.cf").write_text(master)

    def start(self, timeout: float = 30) -> None:
        """Start Postfix (the port is chosen on the first start and kept)."""
        if not os.path.exists("/usr/sbin/postfix"):
            raise RuntimeError(f"Postfix is not installed: {POSTFIX_HINT}")
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="pbem-postfix-"))
            os.chmod(self._dir, 0o755)
            for sub in ("etc", "queue", "data"):
                (self._dir / sub).mkdir()
            shutil.chown(self._dir / "data", "postfix")
            self.port = free_port()
            self._write_config()
        proc = self._postfix("start", timeout=timeout)
        atexit.unregister(self._stop_at_exit)
        atexit.register(self._stop_at_exit)
        try:
            if proc.returncode != 0:
                raise TimeoutError(f"postfix start exited {proc.returncode}")
            wait_for_port(self.port, timeout, greeting=b"220")
        except TimeoutError as exc:
            self.stop()
            raise RuntimeError(f"Postfix did not come up: {exc}\n{self.log_text()[-3000:]}") from exc

    def _master_pid(self) -> int | None:
        try:
            return int((self.directory / "queue" / "pid" / "master.pid").read_text())
        except (OSError, ValueError):
            return None

    def stop(self, timeout: float = 20) -> None:
        """Stop Postfix (``postfix stop``) and wait for its master to exit."""
        if self._dir is None:
            return
        pid = self._master_pid()
        if pid is None or not _alive(pid):
            return
        self._postfix("stop", timeout=timeout)
        deadline = time.monotonic() + timeout
        while _alive(pid):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                break
            time.sleep(0.02)

    def wait_delivered(self, timeout: float = 30) -> None:
        """Wait until no mail is in the queue (every accepted mail delivered).
        Raises RuntimeError naming the queue's files and the log's tail."""
        queue = self.directory / "queue"
        deadline = time.monotonic() + timeout
        while True:
            waiting = [p for sub in ("maildrop", "incoming", "active", "deferred", "hold")
                       for p in (queue / sub).rglob("*") if p.is_file()]
            if not waiting:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"Postfix still holds {len(waiting)} mail(s) after {timeout}s:\n"
                                   f"{self.log_text()[-3000:]}")
            time.sleep(0.02)

    def submit(self, msg: EmailMessage, username: str, password: str) -> None:
        """Submit ``msg`` on the submission port as a mail client does: STARTTLS
        (trusting :attr:`tls`), AUTH as ``username``, then the mail."""
        import smtplib

        with smtplib.SMTP(self.host, self.port, timeout=30) as smtp:
            smtp.starttls(context=self.tls.client_context())
            smtp.login(username, password)
            smtp.send_message(msg)

# --------------------------------------------------------------------------
# SMTP sink
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ReceivedMail:
    """One message the sink accepted."""

    mail_from: str
    rcpt_tos: tuple[str, ...]
    raw: bytes
    #: ``raw`` parsed with ``policy.default`` (after CRLF -> LF).
    message: EmailMessage = field(repr=False)
    #: The client's (address, port): equal for mails sent over one connection.
    peer: tuple = ()


class _SinkHandler:
    def __init__(self, sink: "SmtpSink") -> None:
        self.sink = sink

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        reply = self.sink.reject_recipients.get(address)
        if reply is not None:
            return reply
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        raw = bytes(envelope.original_content)
        mail = ReceivedMail(
            mail_from=envelope.mail_from,
            rcpt_tos=tuple(envelope.rcpt_tos),
            raw=raw,
            # Parsed with \n line ends, so get_content() gives "text\n".
            message=email.message_from_bytes(raw.replace(b"\r\n", b"\n"),
                                             policy=email.policy.default),
            peer=tuple(session.peer or ()),
        )
        with self.sink._lock:
            self.sink.messages.append(mail)
        return "250 Message accepted for delivery"


class _OAuthSinkHandler(_SinkHandler):
    """The sink's handler with SASL XOAUTH2 (aiosmtpd calls ``auth_XOAUTH2``
    for ``AUTH XOAUTH2``): the initial response
    ``user=U\\x01auth=Bearer T\\x01\\x01`` passes when ``sink.oauth2_check(U, T)``
    is true; a refusal is the 334 JSON error challenge, then 535."""

    async def auth_XOAUTH2(self, server, args):
        if len(args) < 2:
            return AuthResult(success=False, handled=False)
        try:
            text = base64.b64decode(args[1], validate=True).decode()
            fields = dict(part.split("=", 1) for part in text.split("\x01") if part)
            user, token = fields["user"], fields["auth"].removeprefix("Bearer ")
        except (ValueError, KeyError, UnicodeDecodeError):
            return AuthResult(success=False, handled=False)
        if self.sink.oauth2_check(user, token):
            self.sink.logins.append(user)
            return AuthResult(success=True, handled=False, auth_data=user)
        error = json.dumps({"status": "401", "schemes": "bearer", "scope": "https://mail.google.com/"})
        await server.challenge_auth(error)
        return AuthResult(success=False, handled=False)


class _QuietController(Controller):
    """Controller without aiosmtpd's warning about AUTH over plaintext (the
    sink is on loopback and wants exactly that)."""

    def factory(self):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Requiring AUTH while not requiring TLS")
            return super().factory()


class SmtpSink:
    """An aiosmtpd SMTP server on 127.0.0.1 (free port) that keeps what it gets.

    ``SmtpSink(tls=None, implicit_tls=False, username=None, password=None)``

    - ``tls``: a :class:`Certificate`: with ``implicit_tls`` the port speaks
      TLS from the first byte (like port 465), else STARTTLS is offered.
    - ``username``/``password``: when given, AUTH PLAIN/LOGIN is offered and
      required (also over plaintext, since this is loopback) and only these
      credentials pass (``535`` otherwise).
    - ``oauth2_check``: a function ``(user, token) -> bool``; when given, AUTH
      XOAUTH2 is offered too (and AUTH required) and passes when it returns
      true; :attr:`logins` lists who logged in so.

    :attr:`messages` lists :class:`ReceivedMail` in arrival order;
    :attr:`reject_recipients` maps an address to the reply RCPT TO gets
    (e.g. ``{"gone@example.org": "550 5.1.1 No such user"}``).
    """

    def __init__(self, *, tls: Certificate | None = None, implicit_tls: bool = False,
                 username: str | None = None, password: str | None = None,
                 oauth2_check=None) -> None:
        self.host = LOOPBACK
        self.oauth2_check = oauth2_check
        self.logins: list[str] = []  # users logged in with XOAUTH2
        self.port = free_port()
        self.messages: list[ReceivedMail] = []
        self.reject_recipients: dict[str, str] = {}
        self.username = username
        self.password = password
        self._lock = threading.Lock()
        kwargs: dict = {}
        if tls is not None and implicit_tls:
            kwargs["ssl_context"] = tls.server_context()
        elif tls is not None:
            kwargs["tls_context"] = tls.server_context()
        if username is not None or oauth2_check is not None:
            kwargs.update(authenticator=self._authenticate, auth_required=True,
                          auth_require_tls=False)
        handler = _SinkHandler(self) if oauth2_check is None else _OAuthSinkHandler(self)
        self.controller = _QuietController(handler, hostname=LOOPBACK,
                                           port=self.port, **kwargs)

    def _authenticate(self, server, session, envelope, mechanism, auth_data) -> AuthResult:
        ok = (self.username is not None and isinstance(auth_data, LoginPassword)
              and auth_data.login == self.username.encode()
              and auth_data.password == self.password.encode())
        return AuthResult(success=ok, handled=False)

    def start(self) -> None:
        self.controller.start()

    def stop(self) -> None:
        self.controller.stop()

    def __enter__(self) -> "SmtpSink":
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()
