"""Named refusals and notices, worded by templates.

The code decides and names (``IllegalAction.code``, a verdict's reason); the
templates word.  Each domain is one template file of Jinja macros, one macro per
name, in ``templates/words/``::

    {% macro not_your_turn(to_move) %}it is not your turn; it is {{ to_move }}'s turn{% endmacro %}

``word("illegal", "not_your_turn", to_move="Bob")`` renders it.  A name without a
macro is a bug and raises KeyError, which a test over every name catches.
"""
from __future__ import annotations

from typing import Any, Callable

from .templates import environment


def _module(domain: str) -> Any:
    return environment().get_template(f"words/{domain}.txt").module


def names(domain: str) -> set[str]:
    """The names worded in ``templates/words/DOMAIN.txt``."""
    module = _module(domain)
    return {n for n in dir(module) if not n.startswith("_")}


def word(domain: str, name: str, **values: Any) -> str:
    """The text of refusal or notice ``name`` of ``domain`` (``illegal``, ``notices``
    ...) with ``values``; surrounding white space stripped.  KeyError when the
    domain's template has no macro ``name``."""
    return _worded(_module(domain), domain, name, values)


def wording(domain: str) -> Callable[..., str]:
    """``word`` of one ``domain``, its template looked up once: ``wording(domain)(name,
    **values) == word(domain, name, **values)``, for a caller wording many
    notices of one domain in a row (``board_map.board_text``)."""
    module = _module(domain)
    return lambda name, **values: _worded(module, domain, name, values)


def _worded(module: Any, domain: str, name: str, values: dict[str, Any]) -> str:
    macro = getattr(module, name, None)
    if macro is None or not callable(macro):
        raise KeyError(f"templates/words/{domain}.txt has no macro {name!r}")
    return str(macro(**values)).strip()


def reason(exc: Any) -> str:
    """The player-facing reason of an ``IllegalAction`` (its ``code`` and
    ``values``, worded by ``templates/words/illegal.txt``).  KeyError for a code
    without a macro.

    ``too_few_shares`` of a company the player holds none of is worded as that:
    "you hold no DM share" (``no_share_held`` of ``templates/words/limits.txt``;
    rules: INVEST, only shares in the player's hand are invested)."""
    if exc.code == "too_few_shares" and exc.values.get("have") == 0:
        return word("limits", "no_share_held", company=exc.values["company"])
    return word("illegal", exc.code, **exc.values)
