"""Real status mails in every language (issue 26): one game of five players, each
reading a different language (en es de cs zh; names with diacritics and Chinese
characters), played by real ``pbem`` cycles on Maildirs (order mails in, status
mails out) into its late game, then the on-move status mail of each player.

Used by ``tests/test_mail_phone.py`` (the layout at 390 and 1280 px in Chromium)
and ``tests/test_mail_size.py`` (the size of each mail)."""
from __future__ import annotations

import mailbox
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

from moderator.config import Config
from moderator.moderation.cycle import Moderator
from moderator.store.gamefile import GameStore
from outbox import unseen_mails

PLAYERS = [("Ann", "ann@example.org"), ("José", "jose@example.org"), ("Zoë", "zoe@example.net"),
           ("Ondřej", "ondrej@example.cz"), ("李雷", "lilei@example.cn")]
LANGUAGES = {"Ann": "en", "José": "es", "Zoë": "de", "Ondřej": "cs", "李雷": "zh"}
GAME = "ridge"


class LanguageTable:
    """A moderator on Maildirs with one five-language game, and what it mailed."""

    def __init__(self, tmp_path: Path, seed: int = 7):
        self.config = Config(games_dir=tmp_path / "games", maildir_inbox=tmp_path / "in",
                             maildir_outbox=tmp_path / "out", spool_dir=tmp_path / "spool")
        self.mod = Moderator(self.config)
        self.mod.create_game(GAME, PLAYERS, seed=seed, languages=LANGUAGES)
        self.inbox = mailbox.Maildir(str(self.config.maildir_inbox), create=True)
        self.outbox = mailbox.Maildir(str(self.config.maildir_outbox), create=True)
        self.seen: set[str] = set()
        self.address = dict(PLAYERS)

    def load(self):
        return GameStore(self.config.games_dir).load(GAME)

    def order(self, name: str, body: str) -> None:
        """``name`` replies in their thread with ``body``."""
        rec = self.load()
        msg = EmailMessage(policy=policy.default)
        msg["From"] = self.address[name]
        msg["To"] = self.config.moderator_address
        msg["Subject"] = f"Re: [pbem:{GAME}:{rec.player_by_name(name).secret}] Union Pacific {GAME}"
        msg["Message-ID"] = make_msgid(domain="example.org")
        msg.set_content(body + "\n")
        self.inbox.add(msg.as_bytes())

    def sent(self) -> list[EmailMessage]:
        return unseen_mails(self.outbox, self.seen)

    def cycle(self) -> list[EmailMessage]:
        report = self.mod.run_cycle()
        assert report.ok and report.applied >= 1, report.summary()
        return self.sent()


def an_order(game, player: str, turn: int) -> str:
    """A legal order for ``player`` on move: an INVEST once four shares are in hand
    (or when nothing can be built), else a build (varied by ``turn``) and a draw."""
    s = game.legal_summary(player)
    if s.invest and (len(game.share_hands[player]) >= 4 or not s.builds):
        return f"invest {s.invest[0]}; discard {sorted(game.track_hands[player])[0]}"
    if s.builds:
        builds = s.build_actions()
        return f"{builds[(turn * 7) % len(builds)]}; take stack"
    return str(s.passes[0])


def late_game_mails(tmp_path: Path) -> tuple[LanguageTable, dict[str, EmailMessage]]:
    """Play a five-language game by real cycles until its third dividend is paid
    (of four), then on until every player has had an on-move status mail in that
    late game; returns the table and ``{language: that player's latest on-move
    status mail}``."""
    t = LanguageTable(tmp_path)
    t.sent()
    rec = t.load()
    taken: set[str] = set()
    for name, _ in PLAYERS:
        share = next(s for s in sorted(rec.game.share_hands[name]) if s not in taken)
        taken.add(share)
        t.order(name, f"start {share}")
    t.cycle()
    on_move: dict[str, EmailMessage] = {}
    for turn in range(400):
        g = t.load().game
        assert g.phase == "play", "the game ended before every player had a late on-move mail"
        late = g.dividends_paid >= 3
        if late and len(on_move) == len(PLAYERS):
            return t, on_move
        mover = g.to_move
        t.order(mover, an_order(g, mover, turn))
        mails = t.cycle()
        if t.load().game.dividends_paid >= 3:
            nxt = t.load().game.to_move
            for m in mails:
                if str(m["To"]) == t.address[nxt]:
                    on_move[LANGUAGES[nxt]] = m
    raise AssertionError("no late game in 400 turns")


_PLAYED: dict[str, tuple[LanguageTable, dict[str, EmailMessage]]] = {}


def shared_late_game(tmp_path_factory) -> tuple[LanguageTable, dict[str, EmailMessage]]:
    """``late_game_mails`` played once per test session (its fixtures in
    ``test_mail_phone.py`` and ``test_mail_size.py`` share it: a game of some 130
    cycles)."""
    if "late" not in _PLAYED:
        _PLAYED["late"] = late_game_mails(tmp_path_factory.mktemp("late-game"))
    return _PLAYED["late"]
