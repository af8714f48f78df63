"""The board map in every status mail (issue 11): an inline PNG of the reader's own
view in the HTML part (``multipart/related``, ``cid:``), its text twin in the text
part (section "THE BOARD"); the welcome and the answer to ``status`` alike."""
from __future__ import annotations

import io
import mailbox
import re
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import make_msgid

import pytest
from PIL import Image

from moderator.config import Config
from moderator.mail.compose import build_message
from moderator.moderation.cycle import Moderator
from moderator.render import MAP_HERE, to_html
from moderator.render.board_map import board_text, city_legend, mail_map, render_map
from moderator.store.gamefile import GameStore
from outbox import unseen_mails

PLAYERS = [("Ann", "ann@example.org"), ("Bob", "bob@example.org"), ("Cy", "cy@example.net")]


class Table:
    """A moderator on Maildirs, one game, and what it mailed."""

    def __init__(self, tmp_path):
        self.config = Config(games_dir=tmp_path / "games", maildir_inbox=tmp_path / "in",
                             maildir_outbox=tmp_path / "out", spool_dir=tmp_path / "spool")
        self.mod = Moderator(self.config)
        self.mod.create_game("ridge", PLAYERS, seed=42)
        self.inbox = mailbox.Maildir(str(self.config.maildir_inbox), create=True)
        self.outbox = mailbox.Maildir(str(self.config.maildir_outbox), create=True)
        self.seen: set[str] = set()

    def load(self):
        return GameStore(self.config.games_dir).load("ridge")

    def order(self, name: str, body: str) -> None:
        rec = self.load()
        msg = EmailMessage(policy=policy.default)
        msg["From"] = dict(PLAYERS)[name]
        msg["To"] = self.config.moderator_address
        msg["Subject"] = f"Re: [pbem:ridge:{rec.player_by_name(name).secret}] Union Pacific ridge"
        msg["Message-ID"] = make_msgid(domain="example.org")
        msg.set_content(body)
        self.inbox.add(msg.as_bytes())

    def sent(self) -> list[EmailMessage]:
        return unseen_mails(self.outbox, self.seen)


@pytest.fixture
def table(tmp_path):
    return Table(tmp_path)


def start_all(t: Table) -> list[EmailMessage]:
    """Everyone makes an initial investment (different shares, so that the
    legends differ); the status mails of that cycle."""
    t.sent()
    rec = t.load()
    taken: set[str] = set()
    for name, _ in PLAYERS:
        share = next(s for s in sorted(rec.game.share_hands[name]) if s not in taken)
        taken.add(share)
        t.order(name, f"start {share}")
    report = t.mod.run_cycle()
    assert report.applied == 3, report.summary()
    return t.sent()  # one status mail each, answering their order


def the_map(msg: EmailMessage) -> tuple[str, str, bytes, str]:
    """(html, cid, png bytes, plain text) of a mail with one inline map, checking
    its structure on the way."""
    if msg.get_content_type() == "multipart/mixed":  # a calendar cancellation attached beside (issue 28)
        msg, *attached = list(msg.iter_parts())
        assert [a.get_content_type() for a in attached] == ["text/calendar"] * len(attached)
    assert msg.get_content_type() == "multipart/alternative"
    plain, related, *calendar = list(msg.iter_parts())  # the deadline's event: the last alternative
    assert [c.get_content_type() for c in calendar] in ([], ["text/calendar"])
    assert plain.get_content_type() == "text/plain"
    assert related.get_content_type() == "multipart/related"
    html_part, image = list(related.iter_parts())
    assert html_part.get_content_type() == "text/html"
    assert image.get_content_type() == "image/png"
    assert image.get_content_disposition() == "inline"
    cid = str(image["Content-ID"])
    assert cid.startswith("<") and cid.endswith(">")
    html = html_part.get_content()
    return html, cid[1:-1], image.get_content(), plain.get_content()


def decode(png: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(png))
    img.load()
    return img


def test_every_status_mail_carries_the_map_and_no_ones_shares(table):
    """The picture is ``mail_map``: the map, its key and the companies' shapes,
    the same for every reader (issue 26: the reader's shares and the company
    values are in the HTML above and below it, not again in the picture)."""
    mails = start_all(table)
    assert len(mails) == 3
    rec = table.load()
    cids = set()
    images = {}
    for m in mails:
        player = rec.player_by_address(str(m["To"]))
        html, cid, png, text = the_map(m)
        # the HTML names the attached picture, with alt text, fitting a phone
        img_tag = re.search(r"<img [^>]*>", html).group(0)
        assert f'src="cid:{cid}"' in img_tag
        assert re.search(r'alt="[^"]+"', img_tag)
        assert 'width="' in img_tag and "max-width:100%" in img_tag and "height:auto" in img_tag
        # below the hand and the players' table, above the companies' table and the closing lines
        assert html.index('id="hand"') < html.index("<h2>PLAYERS") < html.index('<img id="board"')
        assert html.index("<img") < html.index("<h2>COMPANIES") < html.index("Your secret")
        # the picture is the mail's map (no reader's lines: the HTML has the hand)
        expected = mail_map(rec.game)
        assert decode(png).size == decode(expected).size
        assert png == expected
        cids.add(cid)
        images[player.name] = png
        # the marker never reaches a reader
        raw = m.as_bytes()
        assert b"\x00" not in raw and MAP_HERE not in text and MAP_HERE not in html
    assert len(cids) == 3  # a Content-ID unique per mail
    # no reader's own shares in the picture: the same for every reader
    assert len(set(images.values())) == 1


def test_the_text_part_has_the_compact_position_not_the_board_in_words(table):
    """Issue 26: the status mail's HTML part has the picture, so its text part
    drops the long board in words (at most 50 KB a mail) and keeps the compact
    position: each company's sections in the companies' table."""
    mails = start_all(table)
    rec = table.load()
    view = rec.game.public_view()
    for m in mails:
        text = m.get_body(preferencelist=("plain",)).get_content()
        assert "THE BOARD" not in text
        for line in board_text(rec.game):
            if line.strip().startswith(("network", "next")):
                assert line not in text
        for c in view["companies"]:
            if c["sections"]:
                assert f"        sections: {' '.join(c['sections'])}\n" in text, c["abbr"]
        assert text.index("COMPANIES (") < text.index("Your secret for this game")


def test_welcome_and_status_answer_carry_the_map(table):
    welcomes = table.sent()
    assert len(welcomes) == 3
    rec = table.load()
    for m in welcomes:
        _, _, png, text = the_map(m)
        assert png == mail_map(rec.game)
        assert "THE BOARD" not in text
    table.order("Bob", "status")
    table.mod.run_cycle()
    (answer,) = table.sent()
    _, _, png, text = the_map(answer)
    assert png == mail_map(rec.game)
    assert "THE BOARD" not in text


def test_build_message_inline_images():
    png = render_map(_game(), "Ann", width=390)
    msg = build_message(from_addr="m@example.org", from_name="M", to="a@example.org",
                        subject="s", text="hello\n", html='<p><img src="cid:map1@example.org"></p>',
                        images=[("map1@example.org", png)], domain="example.org")
    parsed = BytesParser(policy=policy.default).parsebytes(msg.as_bytes(policy=policy.SMTP))
    html, cid, data, text = the_map(parsed)
    assert cid == "map1@example.org" and f"cid:{cid}" in html
    assert data == png and decode(data).size[0] == 390
    assert text.splitlines() == ["hello"]
    assert list(parsed.walk())[1]["MIME-Version"] is None  # only at the top
    with pytest.raises(ValueError):
        build_message(from_addr="m@example.org", from_name=None, to="a@example.org", subject="s",
                      text="x", html="<p>x</p>", images=[("", png)], domain="example.org")


def test_without_images_the_mail_and_its_html_are_as_before():
    msg = build_message(from_addr="m@example.org", from_name=None, to="a@example.org",
                        subject="s", text="x\n", html=to_html("x\n"), domain="example.org")
    assert [p.get_content_type() for p in msg.iter_parts()] == ["text/plain", "text/html"]
    html = to_html("title\n\na <b>\n")
    assert "<p>a &lt;b&gt;</p>" in html and "<img" not in html and "<pre" not in html
    # a marker without a picture leaves no trace
    assert to_html(f"t\n\na\n{MAP_HERE}\nb\n") == to_html("t\n\na\n\nb\n")


def _game():
    from moderator.rules.engine import Game

    from game_helpers import default_board

    return Game.new(default_board(), ["Ann", "Bob", "Cy"], 7)


def test_each_reader_gets_the_map_in_their_own_language_and_script(tmp_path):
    """Players named José and 李雷 reading Spanish and Chinese: each welcome's
    picture is the mail's map drawn in that reader's language (its key's
    words); the two differ from the English one.  The full map's legend names
    them as they write their name."""
    from moderator import i18n

    config = Config(games_dir=tmp_path / "games", maildir_inbox=tmp_path / "in",
                    maildir_outbox=tmp_path / "out", spool_dir=tmp_path / "spool")
    mod = Moderator(config)
    players = [("José", "jose@example.org"), ("李雷", "lilei@example.org"), ("Ann", "ann@example.org")]
    mod.create_game("ridge", players, seed=42, languages={"José": "es", "李雷": "zh"})
    outbox = mailbox.Maildir(str(config.maildir_outbox), create=True)
    rec = GameStore(config.games_dir).load("ridge")
    seen: set[str] = set()
    got = {str(m["To"]): the_map(m)[2] for m in unseen_mails(outbox, seen)}
    for name, address in players:
        lang = {"José": "es", "李雷": "zh"}.get(name, "en")
        with i18n.speaking(lang):
            assert got[address] == mail_map(rec.game), name
    with i18n.speaking("en"):
        assert got["jose@example.org"] != mail_map(rec.game)
        assert got["lilei@example.org"] != mail_map(rec.game)
    from moderator.render.board_map import legend_lines
    with i18n.speaking("zh"):
        assert legend_lines(rec.game.view("李雷"), "李雷")[0].startswith("李雷，你已投资的股票：")
