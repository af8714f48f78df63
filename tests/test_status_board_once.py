"""The status mails of one position word the board once per language
(``notify.spool_status`` shares ``board_text`` among its mails): each mail
still has the board in its reader's language, as ``board_text`` words it."""
from __future__ import annotations

import mailbox
from datetime import datetime, timezone
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import make_msgid

from moderator import i18n
from moderator.config import Config
from moderator.moderation.cycle import Moderator
from moderator.render import board_map
from moderator.store.gamefile import GameStore

PLAYERS = [("Ann", "ann@example.org"), ("Ana", "ana@example.org"), ("Bo", "bo@example.org"),
           ("Jana", "jana@example.cz")]
LANGUAGES = {"Ann": "en", "Ana": "es", "Bo": "en", "Jana": "es"}


def test_one_board_in_words_per_language_and_each_reader_gets_theirs(tmp_path, monkeypatch):
    config = Config(games_dir=tmp_path / "games", maildir_inbox=tmp_path / "mail" / "inbox",
                    maildir_outbox=tmp_path / "mail" / "outbox", spool_dir=tmp_path / "spool")
    mod = Moderator(config, clock=lambda: datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc))
    mod.create_game("ridge", PLAYERS, seed=5, languages=LANGUAGES)
    outbox = mailbox.Maildir(str(config.maildir_outbox), create=True)
    outbox.clear()  # the welcomes
    record = GameStore(config.games_dir).load("ridge")
    share = record.game.legal_summary("Ann").starts[0].share
    order = EmailMessage(policy=policy.default)
    order["From"] = "ann@example.org"
    order["To"] = config.moderator_address
    order["Subject"] = f"Re: [pbem:ridge:{record.player_by_name('Ann').secret}] Union Pacific ridge"
    order["Message-ID"] = make_msgid(domain="example.org")
    order.set_content(f"start {share}\n")
    mailbox.Maildir(str(config.maildir_inbox), create=True).add(order.as_bytes())

    calls = []
    board_text = board_map.board_text

    def counted(game):
        calls.append(i18n.current())
        return board_text(game)

    monkeypatch.setattr(board_map, "board_text", counted)
    report = mod.run_cycle()
    assert report.ok and report.applied == 1, report.errors
    mod.close()
    assert sorted(calls) == ["en", "es"]  # four status mails, two languages

    game = GameStore(config.games_dir).load("ridge").game
    mails = {}
    for key in outbox.keys():
        with outbox.get_file(key) as fh:
            msg = BytesParser(policy=policy.default).parse(fh)
        mails[str(msg["To"])] = msg.get_body(("plain",)).get_content()
    assert sorted(mails) == sorted(address for _, address in PLAYERS)
    for name, address in PLAYERS:
        with i18n.speaking(LANGUAGES[name]):
            lines = board_text(game)
            heading = i18n.gettext_("THE BOARD")
        assert f"\n{heading}\n" + "\n".join(lines) + "\n" in mails[address]
    with i18n.speaking("en"):
        english = board_text(game)
    with i18n.speaking("es"):
        assert board_text(game) != english  # a shared board would have shown in one language


def test_the_text_blocks_are_worked_out_only_for_a_layout_that_reads_them(monkeypatch):
    """``to_html`` hands the layouts ``blocks`` worked out on first reading:
    the plain layout (mail/text.html) gets them as before, a status mail's
    layout never reads them."""
    from moderator import render

    calls = []
    text_blocks = render.text_blocks

    def counted(text):
        calls.append(text)
        return text_blocks(text)

    text = f"TITLE\n\nA line.\n{render.MAP_HERE}\n  - an item\n"
    figures = [("map.g1@up.example", "Map", 640)]
    expected = render.render_html("mail/text.html", blocks=text_blocks(text), figures=[
        {"cid": "map.g1@up.example", "alt": "Map", "width": 640}])
    monkeypatch.setattr(render, "text_blocks", counted)
    assert render.to_html(text, figures) == expected
    assert calls == [text]
    calls.clear()
    no_map = render.to_html("TITLE\n\nA line.\n", figures)  # the figure goes at the end
    assert no_map.index("A line.") < no_map.index('src="cid:map.g1@up.example"') and calls
