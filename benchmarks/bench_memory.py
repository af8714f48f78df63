"""Benchmark: the peak memory of one ``pbem run`` with a 50 MB mail in the inbox.

    python benchmarks/bench_memory.py [--small N]

In a temporary directory: ``pbem new`` makes a 2-player game (local Maildir
outbox); the inbox gets a 50 MB mail from a player (over ``max_size``, default
256 KiB: it is answered from its headers, its body never read) and ``N`` (default
100) small mails of about 100 kB each (each under ``max_size``: read whole,
answered as mails without an order).  One ``pbem run`` is timed by
``/usr/bin/time -f %M`` (the peak resident set size of that process alone), once
with the local Maildir inbox and once with a Dovecot IMAP inbox on loopback
(``tests/servers.py``; Dovecot must be installed), each with the 50 MB mail
alone and with the small mails too.  Ends with lines ``NAME: VALUE`` (MB).
"""
from __future__ import annotations

import argparse
import mailbox
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAD = (b"From: Ann <ann@example.org>\r\nTo: moderator@pbem.localhost\r\n"
        b"Subject: Re: [pbem:ridge] huge\r\nMessage-ID: <big@example.org>\r\n"
        b"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n")
LINE = b"x" * 76 + b"\r\n"
RUN = ("import sys, pbem\nsys.argv = ['pbem', 'run']\n"
       "try:\n    pbem.main()\nexcept SystemExit:\n    pass\n")


def big_mail() -> bytes:
    return HEAD + b"start EPRG\r\n" + LINE * (50 * 1024 * 1024 // len(LINE))


def small_mail(i: int) -> bytes:
    return (f"From: Bob <bob@example.org>\r\nTo: moderator@pbem.localhost\r\nSubject: note {i}\r\n"
            f"Message-ID: <s{i}@example.org>\r\n\r\n").encode() + b"y" * 76 * 1300 + b"\r\n"


def peak_mb(mode: str, small: int) -> float:
    """Peak RSS (MB) of one ``pbem run`` (see the module doc)."""
    dovecot = None
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        subprocess.run([sys.executable, str(ROOT / "pbem.py"), "new", "ridge", "--player",
                        "Ann=ann@example.org", "--player", "Bob=bob@example.org", "--seed", "1"],
                       check=True, env=env, capture_output=True, cwd=tmp)
        try:
            if mode == "maildir":
                box = mailbox.Maildir(os.path.join(tmp, "mail", "inbox"), create=True)
                box.add(big_mail())
                for i in range(small):
                    box.add(small_mail(i))
            else:
                sys.path.insert(0, str(ROOT / "tests"))
                from servers import Dovecot  # the tests' private Dovecot

                dovecot = Dovecot()
                dovecot.start()
                user = dovecot.new_user("mem")
                dovecot.append(big_mail(), username=user)
                for i in range(small):
                    dovecot.append(small_mail(i), username=user)
                Path(tmp, "pbem.yaml").write_text(
                    "moderator: {address: moderator@pbem.localhost, name: UP moderator}\ngames_dir: games\n"
                    f"imap: {{host: {dovecot.host}, port: {dovecot.port}, security: none, "
                    f"username: {user}, password_env: BENCH_MEM_PASSWORD}}\n")
                env["BENCH_MEM_PASSWORD"] = dovecot.password
            r = subprocess.run(["/usr/bin/time", "-f", "PEAK_KB %M", sys.executable, "-c", RUN],
                               env=env, capture_output=True, text=True, cwd=tmp)
        finally:
            if dovecot is not None:
                dovecot.cleanup()
    lines = [line for line in r.stderr.splitlines() if line.startswith("PEAK_KB ")]
    if not lines:
        raise SystemExit(f"pbem run failed: {r.stderr[-2000:]}")
    return int(lines[-1].split()[1]) / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--small", type=int, default=100, help="small mails besides the big one (default 100)")
    args = ap.parse_args(argv)
    for mode in ("maildir", "imap"):
        print(f"peak_rss_{mode}_50mb_mail_mb: {peak_mb(mode, 0):.1f}")
        print(f"peak_rss_{mode}_50mb_mail_and_{args.small}_small_mb: {peak_mb(mode, args.small):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
