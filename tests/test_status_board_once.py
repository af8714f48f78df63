"""The status mails of one position word no board at all (issue 26: the HTML
part has the picture, the text part the compact position; at most 50 KB a
mail): ``board_text`` is never called by their cycle, and no mail, in any
language, has the section THE BOARD."""
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


def test_status_mails_word_no_board_in_any_language(tmp_path, monkeypatch):
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
    assert calls == []  # four status mails, two languages: no board in words

    game = GameStore(config.games_dir).load("ridge").game
    mails = {}
    for key in outbox.keys():
        with outbox.get_file(key) as fh:
            msg = BytesParser(policy=policy.default).parse(fh)
        mails[str(msg["To"])] = msg.get_body(("plain",)).get_content()
    assert sorted(mails) == sorted(address for _, address in PLAYERS)
    for name, address in PLAYERS:
        with i18n.speaking(LANGUAGES[name]):
            heading = i18n.gettext_("THE BOARD")
            lines = board_text(game)
        assert heading not in mails[address].splitlines()
        # nor the board's lines (each company's network and next sections, indented)
        indented = [line for line in lines if line.startswith("  ") and len(line) > 12]
        assert indented and not any(line in mails[address] for line in indented)
    with i18n.speaking("es"):
        assert i18n.gettext_("THE BOARD") != "THE BOARD"  # the heading looked for in Spanish is Spanish


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
