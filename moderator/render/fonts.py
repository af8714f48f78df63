"""The fonts the board map draws its words with, found on the system by fontconfig.

The map (``board_map``) writes city ids, its legend in the reader's language (en es
de cs zh) and the reader's name in any script (José, Zoë, Jiří, 李雷).  No one font
covers all of that well, so the map draws with a chain of faces (``chain``), each
found with ``fc-match`` (fontconfig) by the patterns of ``PATTERNS``: DejaVu Sans
first (Latin with every diacritic, Greek, Cyrillic; Debian's ``fonts-dejavu-core``),
then Noto Sans CJK SC (Chinese characters, and Latin; ``fonts-noto-cjk``), then
whatever fontconfig offers for ``sans-serif`` and for Chinese.  fontconfig also
gives each face's charset (the code points its cmap maps), so that a text is
drawn only with a face that has a glyph for each of its characters:

* ``runs(text)``: the text in runs of one face each: the whole text in the first
  face that covers every character of it, else each character in the first face
  that covers it;
* a character no face covers is drawn transliterated (its letters without their
  accents, NFKD, when a face covers those) or left out: never as a missing-glyph box.

Without fontconfig or any usable face (a bare machine) the chain is empty and the
map draws with Pillow's bundled font, taken to cover printable ASCII only
(``BUNDLED_CHARSET``; it draws a box for "é" or "李"): names and words beyond ASCII
are transliterated or left out.

Only TrueType and OpenType (CFF) faces are used: what FreeType loads at any size.
``chain()`` runs ``fc-match`` once per process (a few milliseconds each pattern).
"""
from __future__ import annotations

import bisect
import shutil
import subprocess
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache

PATTERNS: tuple[str, ...] = (
    "DejaVu Sans:style=Book",
    "Noto Sans CJK SC:style=Regular",
    "sans-serif",
    "sans-serif:lang=zh-cn",
)
"""The fontconfig patterns of the chain's faces, in the order they are tried
(``fc-match`` gives its best face for each; the same face twice is kept once)."""

FORMATS = frozenset({"TrueType", "CFF"})
"""fontconfig's ``fontformat`` of the faces Pillow's FreeType draws at any size."""

BUNDLED_CHARSET: tuple[tuple[int, int], ...] = ((0x20, 0x7E),)
"""What Pillow's bundled font is taken to cover (the chain's last resort)."""


@dataclass(frozen=True)
class Face:
    """One font face: ``path`` of its file, ``index`` of the face in it (a
    TrueType collection such as NotoSansCJK-Regular.ttc holds several), and
    ``ranges``, the code points it covers as sorted inclusive ``(first, last)``
    pairs (fontconfig's charset).  ``path`` None: Pillow's bundled font."""

    path: str | None
    index: int
    ranges: tuple[tuple[int, int], ...]
    _firsts: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_firsts", tuple(a for a, _ in self.ranges))

    def covers(self, ch: str) -> bool:
        """Whether the face has a glyph for the character ``ch`` (one code point)."""
        cp = ord(ch)
        i = bisect.bisect_right(self._firsts, cp) - 1
        return i >= 0 and cp <= self.ranges[i][1]


BUNDLED = Face(None, 0, BUNDLED_CHARSET)
"""Pillow's bundled font as a face of the chain (used when fontconfig finds none)."""


def parse_charset(text: str) -> tuple[tuple[int, int], ...]:
    """fontconfig's charset (``%{charset}`` of ``fc-match -f``: hexadecimal code
    points and ranges separated by spaces, ``"20-7e a0-17f 2026"``) as sorted
    inclusive ``(first, last)`` ranges.  ValueError for anything else."""
    out = []
    for item in text.split():
        a, _, b = item.partition("-")
        out.append((int(a, 16), int(b or a, 16)))
    return tuple(sorted(out))


def _match(pattern: str) -> Face | None:
    """The face ``fc-match`` gives for ``pattern``, or None (no fontconfig, no
    face, a format FreeType does not scale, or an unreadable answer)."""
    exe = shutil.which("fc-match")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "-f", "%{file}\\t%{index}\\t%{fontformat}\\t%{charset}", pattern],
                             capture_output=True, text=True, timeout=10, check=True).stdout
        path, index, fmt, charset = out.split("\t", 3)
        if not path or fmt not in FORMATS:
            return None
        return Face(path, int(index or 0), parse_charset(charset))
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


@lru_cache(maxsize=1)
def chain() -> tuple[Face, ...]:
    """The faces the map draws with, in order (``PATTERNS``, each once, until
    the faces cover ``PROBE``); Pillow's bundled font alone when fontconfig
    found none."""
    faces: list[Face] = []
    for pattern in PATTERNS:
        if faces and all(any(f.covers(ch) for f in faces) for ch in PROBE):
            break  # the scripts are covered: no more fc-match (a process each)
        face = _match(pattern)
        if face is not None and all((f.path, f.index) != (face.path, face.index) for f in faces):
            faces.append(face)
    return tuple(faces) or (BUNDLED,)


PROBE = "éřŁ李雷"
"""Characters of the five languages' scripts (Latin with diacritics, Chinese):
once the faces found cover them, ``chain`` asks fontconfig for no more."""


def shown(ch: str, faces: tuple[Face, ...]) -> str:
    """What is drawn for character ``ch``: itself when a face of ``faces`` covers
    it (or it is white space), else its letters without accents (NFKD, the
    combining marks dropped) that some face covers, else nothing (``""``)."""
    if ch.isspace() or any(f.covers(ch) for f in faces):
        return ch
    bare = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
    if bare and bare != ch and all(c.isspace() or any(f.covers(c) for f in faces) for c in bare):
        return bare
    return ""


def drawable(text: str, faces: tuple[Face, ...] | None = None) -> str:
    """``text`` as the map draws it: each character ``shown``; ``"Jiří"`` stays,
    ``"李雷"`` stays with a CJK face in the chain and becomes ``""`` without."""
    faces = chain() if faces is None else faces
    return "".join(shown(ch, faces) for ch in text)


def runs(text: str, faces: tuple[Face, ...] | None = None) -> list[tuple[int, str]]:
    """``drawable(text)`` cut into runs ``(index of the face in faces, text)``:
    one run in the first face covering all of it, else each character in the
    first face covering it (a space in the face of the run it is in).  ``[]``
    for an empty text."""
    faces = chain() if faces is None else faces
    text = drawable(text, faces)
    if not text:
        return []
    for i, face in enumerate(faces):
        if all(ch.isspace() or face.covers(ch) for ch in text):
            return [(i, text)]
    out: list[tuple[int, str]] = []
    for ch in text:
        i = out[-1][0] if out and ch.isspace() else \
            next(k for k, f in enumerate(faces) if f.covers(ch))
        if out and out[-1][0] == i:
            out[-1] = (i, out[-1][1] + ch)
        else:
            out.append((i, ch))
    return out


__all__ = ["Face", "PATTERNS", "BUNDLED", "chain", "parse_charset", "shown", "drawable", "runs"]
