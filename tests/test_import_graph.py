"""The import graph of moderator/ has no circle (issue 25).

Every import counts: module level and inside functions, ``import a.b``,
``from . import x`` (x a module or a name of the package), ``from .x import y``
(y a submodule of x, else a name of x).  Importing ``a.b.c`` also runs
``a/__init__`` and ``a/b/__init__``: from outside package ``a`` that is an
edge to ``a`` (and ``a.b``) too (``with_packages``); a module inside a package
importing a sibling is no edge to its own package (a package's ``__init__``
importing its own submodules is not a circle with them).  Imports under
``if TYPE_CHECKING:`` never run and are left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "moderator"


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under moderator/."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _is_package(modules: dict[str, Path], name: str) -> bool:
    return name in modules and modules[name].name == "__init__.py"


def _type_checking_lines(tree: ast.AST) -> set[int]:
    """Line numbers of the bodies of ``if TYPE_CHECKING:`` blocks."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = getattr(test, "id", None) or getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                for child in node.body:
                    for sub in ast.walk(child):
                        if hasattr(sub, "lineno"):
                            lines.add(sub.lineno)
    return lines


def imports_of(modules: dict[str, Path], name: str) -> set[str]:
    """The modules of moderator/ that module ``name`` imports, anywhere in it."""
    path = modules[name]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skip = _type_checking_lines(tree)
    package = name if _is_package(modules, name) else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                if node.level > 1:
                    base = base[: len(base) - (node.level - 1)]
                base = ".".join(base)
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if sub in modules:
                    found.add(sub)
                elif source in modules:
                    found.add(source)
    found.discard(name)
    return found


def graph() -> dict[str, set[str]]:
    """Module -> the modules it imports, for all of moderator/."""
    modules = _modules()
    return with_packages({name: imports_of(modules, name) for name in modules})


def with_packages(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """``edges`` plus, for each import of ``a.b.c`` from outside package ``a``
    (or ``a.b``), an edge to that package: importing ``a.b.c`` runs its
    ``__init__`` first."""
    out = {name: set(targets) for name, targets in edges.items()}
    for name, targets in edges.items():
        for target in targets:
            parts = target.split(".")
            for i in range(1, len(parts)):
                package = ".".join(parts[:i])
                if package in edges and name != package and not name.startswith(package + "."):
                    out[name].add(package)
    return out


def components(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan):
    each a set of modules that import each other in a circle, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every import edge that lies on a circle, named by the shortest circle
    through it (``[a, b, ..., a]``), without repeats, sorted."""
    named: set[tuple[str, ...]] = set()
    for component in components(edges):
        members = set(component)
        for v in component:
            for w in sorted(edges[v] & members):
                path = _shortest_path(edges, members, w, v)
                cycle = [v] + path
                # the same circle from its smallest module
                k = cycle.index(min(cycle[:-1]))
                named.add(tuple(cycle[k:-1] + cycle[: k + 1]))
    return sorted(list(c) for c in named)


def _shortest_path(edges, members, start: str, goal: str) -> list[str]:
    """The shortest import path from ``start`` to ``goal`` inside ``members``."""
    paths = {start: [start]}
    frontier = [start]
    while frontier and goal not in paths:
        nxt = []
        for v in frontier:
            for w in sorted(edges[v] & members):
                if w not in paths:
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        frontier = nxt
    return paths[goal]


def test_the_graph_sees_every_kind_of_import(tmp_path):
    """The reader resolves the forms the package uses (a check on the checker)."""
    edges = graph()
    # module level `from .x import y` inside a package
    assert "moderator.rules.errors" in edges["moderator.rules.legal"]
    # an import inside a function counts
    assert "moderator.moderation.seats" in edges["moderator.moderation.interpret"]
    # `from . import x` of a module, in a module and in a package's __init__
    assert "moderator.moderation.faults" in edges["moderator.moderation.gm"]
    assert "moderator.render.templates" in edges["moderator.render"]
    # `from ..render import render` (a name of a package) is an edge to the package
    assert "moderator.render" in edges["moderator.moderation.gm"]
    # every target is a module of moderator/
    assert all(target in edges for targets in edges.values() for target in targets)
    # a synthetic circle is found and named
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert circles({"a": {"b"}, "b": set()}) == []


# The circles that remain, each to be broken (issue 25); the list only shrinks.
# All are broken: a new circle fails the test.
KNOWN: set[tuple[str, ...]] = set()


def _short(circle: list[str]) -> tuple[str, ...]:
    return tuple(name.removeprefix("moderator.") for name in circle)


def test_no_import_circle_in_moderator():
    found = {_short(c) for c in circles(graph())}
    new = sorted(found - KNOWN)
    assert not new, "import circles in moderator/:\n" + "\n".join(" -> ".join(c) for c in new)
    gone = sorted(KNOWN - found)
    assert not gone, "broken circles still listed in KNOWN:\n" + "\n".join(
        " -> ".join(c) for c in gone
    )


# The moderation modules in layers (docs/architecture.md draws the same table):
# each imports only modules of the rows before its own.
LAYERS = [
    "faults report verdict spooled language deadlines route vacancy",
    "send authenticate advance calendar",
    "observers announce inbox digest",
    "notify seats ballot press unsubscribe",
    "interpret clock create",
    "gm commands privacy",
    "proposals people",
    "decide",
    "act signup",
    "pool",
    "cycle",
]


def test_moderation_imports_point_up_the_layers():
    layer = {f"moderator.moderation.{m}": i for i, row in enumerate(LAYERS) for m in row.split()}
    edges = graph()
    modules = {m for m in edges if m.startswith("moderator.moderation.")}
    assert modules == set(layer), f"modules not in LAYERS: {sorted(modules - set(layer))}, " \
        f"gone: {sorted(set(layer) - modules)}"
    wrong = sorted(f"{m} (row {layer[m]}) imports {t} (row {layer[t]})"
                   for m in modules for t in edges[m] if t in layer and layer[t] >= layer[m])
    assert not wrong, "\n".join(wrong)


def test_the_docs_draw_the_layers():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    drawn = "\n".join("  " + "  ".join(row.split()) for row in LAYERS)
    assert drawn in text


def test_the_reader_on_a_package_of_its_own(tmp_path):
    """Each form of import, in a package written for the test: which edges it gives."""
    pkg = tmp_path / "p"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "p": (pkg / "__init__.py", "from . import a\n"),
        "p.a": (pkg / "a.py", "from .sub import b\nfrom .sub.c import NAME\n"
                               "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import d\n"),
        "p.d": (pkg / "d.py", "def f():\n    import p.sub.c\n    from .. import os\n"),
        "p.sub": (pkg / "sub" / "__init__.py", "from .. import NAME\n"),
        "p.sub.b": (pkg / "sub" / "b.py", "from ..a import x\n"),
        "p.sub.c": (pkg / "sub" / "c.py", "NAME = 1\n"),
    }
    for path, text in files.values():
        path.write_text(text)
    modules = {name: path for name, (path, _) in files.items()}
    edges = {name: imports_of(modules, name) for name in modules}
    assert edges == {
        "p": {"p.a"},
        "p.a": {"p.sub.b", "p.sub.c"},  # not p.d: only under TYPE_CHECKING
        "p.d": {"p.sub.c"},
        "p.sub": {"p"},
        "p.sub.b": {"p.a"},
        "p.sub.c": set(),
    }
    assert circles(edges) == [["p.a", "p.sub.b", "p.a"]]  # p.sub imports p, but nothing imports p.sub
    # importing p.sub.b runs p/sub/__init__, which imports p: p.a imports its own
    # package's sibling, so that is no edge to p, but one to p.sub
    assert with_packages(edges)["p.a"] == {"p.sub", "p.sub.b", "p.sub.c"}
    assert with_packages({"q.x": {"p.sub.c"}, "p": set(), "p.sub": set(), "p.sub.c": set()})["q.x"] == \
        {"p", "p.sub", "p.sub.c"}
