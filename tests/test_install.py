"""Installing pbem for real, in every way an operator may, and running it from there.

Each mode installs a copy of the project into temporary folders and runs the
installed ``pbem`` from an empty folder (the embedded default configuration):
``--version``, ``new``, ``show`` and ``doctor``; the ``--user`` install (the one
whose templates were once not found) also plays a whole ``demo``.  A probe run with
the installed interpreter checks that the code, the templates and the default board
really come from the install (the source copy is deleted first, except for the
editable install, which reads it).

The modes: a virtual environment (``pip install .``), ``pip install --user .``,
pipx, a wheel (``pip wheel .`` then installing that file) and an editable install
(``pip install -e .``).

Fast and offline: pip runs with ``--no-deps --no-build-isolation --no-index``, so it
builds with the setuptools and wheel of the running interpreter (the ``test`` extra
brings them) and downloads nothing.  The dependencies (click, Jinja2 ...) come from
the running interpreter too: a ``.pth`` file in the new environment's site-packages
(the venv's, or the temporary user site's) appends the running interpreter's
site-packages to ``sys.path``, after the install's own.  That works also when the
running interpreter is itself a virtual environment (CI's ``.venv``), where
``venv --system-site-packages`` would see only the base Python's packages.  Nothing
outside the temporary folders is written: ``HOME`` and ``PYTHONUSERBASE`` point
there, so the real user site is never touched.
"""
from __future__ import annotations

import configparser
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.install

#: Top-level entries of the repository that a build does not need.
NOT_COPIED = {".git", ".ci", ".venv", "venv", "build", "dist", "tests", "benchmarks", "games", "mail",
              "demo", "spool", ".pytest_cache", ".hypothesis", "__pycache__"}

PLAYERS = ["--player", "Ann=ann@example.org", "--player", "Bob=bob@example.org"]

PROBE = """\
import importlib.metadata, moderator, moderator.render as r, moderator.rules.board as b
print(moderator.__file__)
print(r.packaged_templates())
print(b.DEFAULT_BOARD_PATH)
print(importlib.metadata.version("pbem"))
"""


def version() -> str:
    text = (ROOT / "moderator" / "__init__.py").read_text(encoding="utf-8")
    return re.search(r'^__version__ = "([^"]+)"', text, re.M).group(1)


@pytest.fixture(scope="module")
def build_tools():
    """setuptools (64 or later: editable installs) and a bdist_wheel command, which
    an install without build isolation takes from the running interpreter."""
    try:
        import setuptools
    except ImportError:
        pytest.fail("setuptools is not installed: pip install -e '.[test]'", pytrace=False)
    if int(setuptools.__version__.split(".")[0]) < 64:
        pytest.fail(f"setuptools {setuptools.__version__} is too old (64 or later): "
                    "pip install -e '.[test]'", pytrace=False)
    try:
        import wheel  # noqa: F401
    except ImportError:
        try:
            import setuptools.command.bdist_wheel  # noqa: F401  (setuptools 70.1 and later)
        except ImportError:
            pytest.fail("wheel is not installed: pip install -e '.[test]'", pytrace=False)


def parent_site_packages() -> list[str]:
    """The running interpreter's site-packages (its dependencies, pip, setuptools)."""
    paths = [sysconfig.get_path("purelib"), sysconfig.get_path("platlib"), *site.getsitepackages()]
    out = []
    for p in paths:
        if p and Path(p).is_dir() and p not in out:
            out.append(p)
    return out


def base_python() -> str:
    """A Python with a user site: the running one, or the one a venv was made from."""
    if sys.prefix == sys.base_prefix:
        return sys.executable
    name = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (Path(sys.base_prefix) / "bin" / name, Path(sys.base_prefix) / "bin" / "python3"):
        if candidate.exists():
            return str(candidate)
    return getattr(sys, "_base_executable", sys.executable)


class Install:
    """One install mode's temporary world: a source copy, HOME, PYTHONUSERBASE."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.src = tmp / "src"
        self.src.mkdir()
        for entry in ROOT.iterdir():
            if entry.name in NOT_COPIED or entry.name.endswith(".egg-info"):
                continue
            if entry.is_dir():
                shutil.copytree(entry, self.src / entry.name,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copy2(entry, self.src / entry.name)
        (tmp / "home").mkdir()
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("PYTHONPATH", "PYTHONHOME", "PBEM_TEMPLATES", "VIRTUAL_ENV",
                                 "PYTHONSTARTUP", "PYTHONNOUSERSITE", "PIP_USER", "PIP_TARGET",
                                 "PIP_PREFIX", "PIP_REQUIRE_VIRTUALENV")}
        self.env.update(HOME=str(tmp / "home"), PYTHONUSERBASE=str(tmp / "userbase"),
                        PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1",
                        PIP_ROOT_USER_ACTION="ignore")
        self.run_dir = tmp / "run"
        self.run_dir.mkdir()

    def run(self, *args: str, cwd: Path | None = None, timeout: float = 120,
            env: dict | None = None) -> subprocess.CompletedProcess:
        proc = subprocess.run([str(a) for a in args], cwd=cwd or self.tmp, env={**self.env, **(env or {})},
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, f"{args}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        return proc

    def link_parent(self, site_dir: Path) -> None:
        """Let ``site_dir``'s interpreter see the running interpreter's packages."""
        site_dir.mkdir(parents=True, exist_ok=True)
        (site_dir / "_pbem_test_parent.pth").write_text("\n".join(parent_site_packages()) + "\n")

    def venv(self, path: Path) -> Path:
        """A virtual environment without pip of its own: its python."""
        self.run(sys.executable, "-m", "venv", "--without-pip", path)
        python = path / "bin" / "python"
        purelib = self.run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))")
        self.link_parent(Path(purelib.stdout.strip()))
        return python

    def pip_install(self, python: Path | str, *args: str, env: dict | None = None) -> None:
        self.run(python, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                 "--no-cache-dir", "--force-reinstall", "--quiet", *args, env=env)


def install(mode: str, w: Install) -> tuple[Path, Path | str, Path, str]:
    """Install in ``mode``: ``(the pbem script, the python it runs with, the folder
    the installed code must come from, the words doctor uses for the mode)``."""
    if mode == "venv":
        python = w.venv(w.tmp / "venv")
        w.pip_install(python, w.src)
        return w.tmp / "venv" / "bin" / "pbem", python, w.tmp / "venv", "the virtual environment"
    if mode == "wheel":
        dist = w.tmp / "dist"
        w.run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
              "--no-cache-dir", "--quiet", "-w", dist, w.src)
        (whl,) = dist.glob("pbem-*.whl")
        python = w.venv(w.tmp / "venv")
        w.pip_install(python, whl)
        return w.tmp / "venv" / "bin" / "pbem", python, w.tmp / "venv", "the virtual environment"
    if mode == "editable":
        python = w.venv(w.tmp / "venv")
        w.pip_install(python, "-e", w.src)
        return w.tmp / "venv" / "bin" / "pbem", python, w.src, "an editable install"
    if mode == "pipx":
        # pipx emulated by its own layout: pipx is not installed here nor on CI, and a
        # real `pipx install` would fetch pip into its shared environment (network).
        # pipx makes a venv $PIPX_HOME/venvs/NAME, installs the package there and links
        # its scripts into $PIPX_BIN_DIR, and notes what it did in the venv's
        # pipx_metadata.json; so does this.
        venv = w.tmp / "pipx" / "venvs" / "pbem"
        python = w.venv(venv)
        w.pip_install(python, w.src)
        (venv / "pipx_metadata.json").write_text('{"main_package": {"package": "pbem"}}\n')
        bindir = w.tmp / "pipx-bin"
        bindir.mkdir()
        (bindir / "pbem").symlink_to(venv / "bin" / "pbem")
        return bindir / "pbem", python, venv, "a pipx install"
    if mode == "user":
        python = base_python()
        user_site = w.run(python, "-c", "import site; print(site.getusersitepackages())").stdout.strip()
        assert user_site.startswith(str(w.tmp)), user_site  # never the real user site
        w.link_parent(Path(user_site))
        # Debian's python3 is marked externally managed (PEP 668); this install goes
        # to the temporary user base only.
        w.pip_install(python, "--user", w.src, env={"PIP_BREAK_SYSTEM_PACKAGES": "1"})
        return w.tmp / "userbase" / "bin" / "pbem", Path(python), w.tmp / "userbase", "a --user install"
    raise AssertionError(mode)


@pytest.mark.parametrize("mode", ["venv", "user", "pipx", "wheel", "editable"])
def test_install_mode(mode, tmp_path, build_tools):
    w = Install(tmp_path)
    pbem, python, root, words = install(mode, w)
    if mode != "editable":
        shutil.rmtree(w.src)  # the install must not need its source
    at = w.run_dir

    probe = w.run(python, "-c", PROBE, cwd=at).stdout.splitlines()
    code, templates, board, meta = (Path(probe[0]), Path(probe[1]), Path(probe[2]), probe[3])
    for path in (code, templates, board):
        assert path.resolve().is_relative_to(root.resolve()), (mode, probe)
    assert (templates / "words" / "notices.txt").is_file() and board.is_file()
    assert meta == version()

    assert w.run(pbem, "--version", cwd=at).stdout == f"pbem {version()}\n"
    out = w.run(pbem, "new", "g1", *PLAYERS, "--seed", "1", cwd=at).stdout
    assert "Created game g1" in out and "Welcome mails sent to: Ann" in out
    assert len(list((at / "mail" / "outbox" / "new").iterdir())) == 2
    assert "Game g1: phase initial" in w.run(pbem, "show", "g1", cwd=at).stdout
    doctor = w.run(pbem, "doctor", cwd=at).stdout
    assert re.search(rf"^OK    templates: the 43 templates load from .*; pbem is {words}", doctor, re.M), doctor
    assert "OK    default board: North America" in doctor and doctor.rstrip().endswith("All checks passed.")
    if mode == "user":
        out = w.run(pbem, "demo", "--dir", "d", cwd=at, timeout=300).stdout
        assert "The game is over after" in out and "Final standings" in out


def test_every_package_is_listed():
    """setup.cfg lists the packages by hand (``find:`` cannot map templates/ to
    moderator.templates): every package under moderator/ must be there."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    listed = {line.strip() for line in cfg["options"]["packages"].splitlines() if line.strip()}
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "moderator").rglob("__init__.py")}
    assert listed == on_disk | {"moderator.templates"}
