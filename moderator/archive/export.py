"""``pbem export GAME``: one game as a single self-contained file, in the game-file
format (docs/game-file.md is its schema), as YAML or JSON.

With ``--with-secrets`` the export is the game file's mapping as pbem keeps it
(migrated to the current format): it loads back with ``GameStore.load`` and its
full check.  Without it, what no player may know of another is removed:

* every player's ``address`` and ``secret`` become ``''``; the Message-IDs of the
  mails (``history[].message_id``, ``reply_to``, ``threads``) are dropped (null, ``{}``);
* the game master's ``address`` and ``secret`` become ``''``, the observers'
  addresses ``''``; in ``gm_log`` the addresses (``by``, ``address``,
  ``old_address``) become ``''``, the Message-ID of the game master's mail
  (``mail``) null, and the orders taken back by ``undo`` (``undone``) are
  treated as ``history`` is; ``ended.by`` is ``''`` when it is an address;
  in ``proposals``, a takeback's ``order`` is treated as ``history`` is and the
  Message-IDs of the mails that asked (``asked``) are null;
* last, every address and Message-ID left in any text (a command's words such
  as ``replace Ana Ava=ADDRESS`` or ``observe ADDRESS``, a reason) is masked:
  ``[address]``, ``[Message-ID]``; a public export holds no ``@``;
* the players' messages (``press``) only as the archive site shows them
  (``settings.press_archive``: ``always``, or ``after-end`` once the game is over),
  each ``{from, to, at, text}`` (no Message-IDs); otherwise none;
* in ``state``, the hands (``track_hands``, ``share_hands``), the shares
  returned in UP swaps (``returned``), the order of the decks (``track_deck``,
  ``stack``; emptied) and, while the game is in its initial phase, the initial
  choices;
* while the game is not over, ``history[].order`` is the public text of each order
  (``moderator.rules.notation.public_order``: the share returned in an UP swap, and
  during the initial phase the initial investments, are hidden) and the ``seed`` is
  set to null: with the seed and the history anyone could recompute every hand.
  A finished game's history stays whole, so that its export replays.

A public export of a finished game loads back with ``GameStore.load(check=False)``
(the replay gives the game; the emptied state keys are not compared); a public
export of a running game is a record, not a replayable file (no seed).  Both carry
``exported: {secrets: false, replayable: ...}``, a key readers may ignore.
"""
from __future__ import annotations

import copy
import json
import re
from typing import Any

from ..rules.notation import public_order


def export_data(data: dict[str, Any], with_secrets: bool = False) -> dict[str, Any]:
    """The mapping to export of a game file's mapping (``GameStore.read_data``)."""
    out = copy.deepcopy(data)
    if with_secrets:
        return out
    state = out.get("state") or {}
    over = state.get("phase") == "over"
    names = [p["name"] for p in out.get("players") or []]
    # public: who played a seat by the built-in player (everyone was told); not a
    # player's address, secret, time zone or vacations
    out["players"] = [{"name": p["name"], "address": "", "secret": "",
                       **{k: p[k] for k in ("bot", "abandoned") if k in p}}
                      for p in out.get("players") or []]
    out["reply_to"] = {}
    out["threads"] = {}
    initial_open = state.get("phase", "initial") != "initial"
    out["history"] = [{**h, "message_id": None,
                       "order": h.get("order") if over else public_order(str(h.get("order", "")), initial_open)}
                      for h in out.get("history") or []]
    # orders in advance and standing choices are the players' secrets; the choices
    # given beside a move (issue 30) may name a hidden part (a discard) until the end
    out.pop("queued", None)
    out.pop("standing", None)
    if not over:
        for h in out["history"]:
            h.pop("alternatives", None)
    if "game_master" in out:
        out["game_master"] = {"address": "", "secret": ""}
    if "observers" in out:
        out["observers"] = ["" for _ in out["observers"] or []]
    log = []
    for e in out.get("gm_log") or []:
        e = {**e, **{k: "" for k in ("by", "address", "old_address") if k in e}}
        if "undone" in e:
            e["undone"] = [{**h, "message_id": None,
                            "order": h.get("order") if over else public_order(str(h.get("order", "")), initial_open)}
                           for h in e["undone"] or []]
        log.append(e)
    if "gm_log" in out:
        out["gm_log"] = log
    if "proposals" in out:  # a takeback's move as history's; the Message-IDs of the mails that asked: null
        out["proposals"] = [{**p, **({"order": p["order"] if over else public_order(str(p["order"]), initial_open)}
                                     if "order" in p else {}),
                             **({"asked": {n: None for n in p["asked"]}} if isinstance(p.get("asked"), dict) else {})}
                            for p in out["proposals"] or []]
    if not over:
        out["seed"] = None
    for key in ("track_hands", "share_hands", "returned"):
        if key in state:
            state[key] = {n: [] for n in state[key]}
    for key in ("track_deck", "stack"):
        if key in state:
            state[key] = []
    if state.get("phase", "initial") == "initial" and "initial_choice" in state:
        state["initial_choice"] = {}
    for e in out.get("gm_log") or []:
        if "mail" in e:  # the Message-ID of the game master's mail that gave the command
            e["mail"] = None
    if isinstance(out.get("ended"), dict) and "@" in str(out["ended"].get("by") or ""):
        out["ended"]["by"] = ""  # ended by the game master's mail: its address
    if "press" in out:  # the players' messages: as the archive site shows them (press_archive), else none
        from .site import public_press

        shown = public_press(out, over)
        out["press"] = [{"from": e["from"], "to": e["to"] or "all", "at": p.get("at"), "text": e["text"]}
                        for e, p in zip(shown, out["press"])]
        if not out["press"]:
            del out["press"]
    out = _masked(out)
    out["exported"] = {"secrets": False, "replayable": over, "players": names}
    return out


_MESSAGE_ID = re.compile(r"<[^<>\s@]*@[^<>\s]*>")
_ADDRESS = re.compile(r"[^\s<>()\[\],;:\"'=@]+@[^\s<>()\[\],;:\"'@]+")


def _masked(value: Any) -> Any:
    """``value`` (a game file's mapping, or any part of it) with every
    Message-ID (``<...@...>``) and mail address left in a text masked:
    ``"replace Ana Ava=ava@example.org"`` -> ``"replace Ana Ava=[address]"``,
    ``"<g1.gm@example.com>"`` -> ``"[Message-ID]"``; the last sweep of a public
    export, so that no key a later format adds (a command's words, a reason,
    a bounce) carries an address out."""
    if isinstance(value, str):
        if "@" not in value:
            return value
        return _ADDRESS.sub("[address]", _MESSAGE_ID.sub("[Message-ID]", value))
    if isinstance(value, dict):
        return {_masked(k) if isinstance(k, str) else k: _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def dump(data: dict[str, Any], fmt: str = "yaml") -> str:
    """``data`` as YAML (the game file's own style: PyYAML's safe dumper, keys in
    order) or JSON (indented, UTF-8 text)."""
    if fmt == "json":
        return json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    from ..store.gamefile import _dump

    return _dump(data)
