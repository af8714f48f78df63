"""The docs name no file the product no longer writes (issue 26): every file name
in README.md and docs/* is one the code knows (a string constant of
``moderator/``, or a file of the source tree), or the code's name of a file it
only reads from an older pbem (a module constant named ``*LEGACY*``, e.g.
``bookkeeping.LEGACY_NAME``), and then only in a paragraph that says so
("older", "migrated", ...).  Both lists are derived from the code with ``ast``,
not written here: a file the code stops writing drops out of them."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILE = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+(?:\.[\w-]+)*\.(?:yaml|yml|json|lock|sqlite3|owner|names|eml|"
                  r"migrated|png|html|css|tmp|txt|po|pot|service|timer))(?![\w-])")
"""A file name as the docs write one (``spool/cycle.lock``, ``GAME.yaml``)."""
LEGACY_WORDS = re.compile(r"older|migrat|import|took over|legacy|downgrade|format [1-3]", re.I)
"""What a paragraph says when it names a file only an older pbem wrote."""


def code_names() -> tuple[set[str], set[str], set[str]]:
    """(file names in the code's string constants, the suffixes it appends
    (``".migrated"``, ``".lock"``), the legacy names: constants named ``*LEGACY*``)."""
    names, suffixes, legacy = set(), set(), set()
    for path in (ROOT / "moderator").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                if any(isinstance(t, ast.Name) and "LEGACY" in t.id for t in node.targets):
                    legacy.add(node.value.value)
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for found in FILE.finditer(node.value):
                    names.add(found.group(1).rsplit("/", 1)[-1])
                if re.fullmatch(r"\.[a-z0-9]+", node.value):
                    suffixes.add(node.value)
    return names - legacy, suffixes, legacy


def tree_names() -> set[str]:
    """The names of the source tree's files (templates, docs, examples, data)."""
    return {p.name for p in ROOT.rglob("*") if p.is_file() and ".git" not in p.parts
            and not any(part.startswith(".venv") for part in p.parts)}


def paragraphs() -> list[tuple[str, str]]:
    """(document, paragraph) of README.md and every file of docs/."""
    out = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").iterdir())]:
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            DOCS[path.name] = text
            for para in re.split(r"\n\s*\n", text):
                out.append((path.name, para))
    return out


DOCS: dict[str, str] = {}
"""The documents' texts, by name (``paragraphs``)."""


def named_by_a_command(doc: str, stem: str) -> bool:
    """``stem`` is a game (or a file) the document's ``pbem`` commands name:
    ``games/ridge.yaml`` after ``pbem new ridge``, ``ridge.png`` after ``--map
    ridge.png``; the product writes such files under the names it is given."""
    return bool(re.search(rf"\bpbem\b[^\n`]*\b{re.escape(stem)}\b", DOCS.get(doc, "")))


def stale(paras: list[tuple[str, str]]) -> list[str]:
    """The file names ``paras`` name that the product does not write now."""
    names, suffixes, legacy = code_names()
    known = names | tree_names()
    bad = []
    for doc, para in paras:
        for found in FILE.finditer(para):
            name = found.group(1).rsplit("/", 1)[-1]
            stem, _, ext = name.partition(".")
            if name in legacy:
                if not LEGACY_WORDS.search(para):
                    bad.append(f"{doc}: {found.group(1)} (only an older pbem wrote it): {para.strip()[:120]}")
                continue
            if name in known or any(name == f"{old}{s}" for old in legacy for s in suffixes):
                continue
            if "*" in stem or any(part.isupper() for part in re.split(r"[-_]", stem)):
                continue  # a placeholder: GAME.yaml, NAME.eml, dividend-N.png
            if named_by_a_command(doc, stem):
                continue
            bad.append(f"{doc}: {found.group(1)} (no such file in the code or the tree): {para.strip()[:120]}")
    return bad


def test_the_docs_name_no_file_the_product_no_longer_writes():
    assert stale(paragraphs()) == []


def test_the_check_finds_the_stale_sentences_of_issue_26():
    """The two kinds it must catch: the spool said to hold the old state file, and
    a file name the code no longer has."""
    _, _, legacy = code_names()
    assert "moderator.yaml" in legacy  # bookkeeping.LEGACY_NAME: read once, never written
    old = ("pbem.example.yaml", "# when the SMTP server has accepted it (docs/operations.md). Also holds the\n"
           "# moderator's own state (moderator.yaml) and the cycle lock.")
    assert len(stale([old])) == 1
    assert stale([("x.md", "The spool holds `state.yaml`.")])
    assert stale([("x.md", "It took over from `spool/moderator.yaml` of an older pbem.")]) == []
    assert stale([("x.md", "The spool holds `pbem.sqlite3` and `cycle.lock`; `GAME.yaml`.")]) == []
