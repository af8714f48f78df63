"""Debian's headless Chromium for the tests that look at pages and mails as a
reader's browser shows them (``tests/test_archive_site.py``,
``tests/test_mail_html.py``).  ``.ci/run`` installs it; elsewhere those tests are
skipped (``needs_chromium``)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: Headless, as root, and without the background connections this machine's
#: closed network refuses.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")


def run_chromium(*args: str, tmp: Path, timeout: float = 180) -> subprocess.CompletedProcess:
    """Run Chromium with ``args`` (after ``CHROMIUM_FLAGS``) and a fresh profile in
    ``tmp/profile``; its output captured as text."""
    profile = tmp / "profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=timeout)
