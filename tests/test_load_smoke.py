"""The load benchmark's path, small: ``benchmarks/bench_load.py`` with eight
games on a private Dovecot and an SMTP server on loopback, ``pbem run --loop
--archive`` as a process of its own, orders and stray mail injected by IMAP
APPEND.  Nothing lost, nothing doubled (checked by the injector from the game
files and the mails SMTP accepted); no timing is asserted."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))


def figures(text: str) -> dict[str, str]:
    """The benchmark's closing ``NAME: VALUE`` lines."""
    out = {}
    for line in text.splitlines():
        name, sep, value = line.partition(": ")
        if sep and name.startswith("load_") and " " not in name:
            out[name] = value.strip()
    return out


def test_load_benchmark_loses_and_doubles_nothing(capsys):
    if shutil.which("dovecot") is None and not Path("/usr/sbin/dovecot").exists():
        pytest.fail("dovecot is not installed", pytrace=False)
    import bench_load

    status = bench_load.main(["--games", "8", "--rates", "2", "--phase", "6", "--seed", "3"])
    out = capsys.readouterr().out
    got = figures(out)
    assert status == 0, out
    assert got["load_games"] == "8"
    assert int(got["load_orders"]) >= 4, out  # rate 2/s for 6 s: about 12
    # every order answered in the cycle that read it, as many as were sent
    assert got["load_answered"] == got["load_orders"], out
    assert int(got["load_strays"]) >= 3, out  # one of each kind at least
    assert got["load_strays_answered_wrongly"] == "0", out
    assert got["load_lost"] == "0", out
    assert got["load_doubled"] == "0", out
