"""The spool's grouped durable writes: ``add_many`` (two fsyncs per mail and one
directory fsync per batch), the batch marked ``sending`` with one write, and the
sent entries removed with one directory fsync; what a crash leaves behind."""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from email.message import EmailMessage

import pytest

from moderator.store import files
from moderator.store.spool import SENDING, Spool

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def mail(to: str) -> EmailMessage:
    msg = EmailMessage()
    msg["To"], msg["From"], msg["Subject"] = to, "mod@example.org", f"to {to}"
    msg["Message-ID"] = f"<{to}@example.org>"
    msg.set_content("hello\n")
    return msg


class Box:
    """An outbox answering each mail with ``answers`` (None = accepted)."""

    def __init__(self, answers=None):
        self.answers = answers
        self.sent: list[EmailMessage] = []

    def send_many(self, msgs, on_result=None):
        msgs = list(msgs)
        self.sent += msgs
        answers = list(self.answers) if self.answers is not None else [None] * len(msgs)
        for i, answer in enumerate(answers):
            if on_result is not None:
                on_result(i, answer)
        return answers


@pytest.fixture
def fsyncs(monkeypatch):
    calls = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    return calls


def test_add_many_spools_in_order_with_one_directory_fsync(tmp_path, fsyncs):
    spool = Spool(tmp_path)
    names = spool.add_many([(mail(f"p{i}@example.org"), {"kind": "status", "player": f"p{i}"})
                            for i in range(3)], NOW)
    assert len(fsyncs) == 2 * 3 + 1
    entries = spool.entries()
    assert [e.name for e in entries] == names == sorted(names)
    assert [e.meta["player"] for e in entries] == ["p0", "p1", "p2"]
    assert all(e.meta["attempts"] == 0 and e.meta["created"] == NOW.isoformat() for e in entries)
    assert str(entries[1].message["To"]) == "p1@example.org"
    assert not list(tmp_path.glob(".*.tmp"))
    fsyncs.clear()
    spool.add(mail("q@example.org"), {}, NOW)
    assert len(fsyncs) == 3
    assert spool.add_many([], NOW) == []


def test_add_many_failure_leaves_no_temporary_file(tmp_path, monkeypatch):
    spool = Spool(tmp_path)
    calls = []

    def replace(src, dst):
        if len(calls) == 2:
            raise OSError("disk full")
        calls.append(dst)
        os.rename(src, dst)

    monkeypatch.setattr(files.os, "replace", replace)
    with pytest.raises(OSError):
        spool.add_many([(mail("a@example.org"), {}), (mail("b@example.org"), {})], NOW)
    monkeypatch.undo()
    assert not list(tmp_path.glob(".*.tmp"))
    assert [str(e.message["To"]) for e in spool.entries()] == ["a@example.org"]  # a prefix, whole


def test_eml_without_json_is_not_an_entry(tmp_path):
    spool = Spool(tmp_path)
    spool.add(mail("a@example.org"), {"kind": "reply"}, NOW)
    (tmp_path / "00000000000000000001-00001-000001.eml").write_bytes(b"To: x@example.org\r\n\r\nhi\r\n")
    assert [str(e.message["To"]) for e in spool.entries()] == ["a@example.org"]
    box = Box()
    assert spool.send_due(box, NOW).sent == 1 and len(box.sent) == 1


def test_send_due_marks_the_batch_once_and_removes_with_one_directory_fsync(tmp_path, fsyncs):
    spool = Spool(tmp_path)
    spool.add_many([(mail(f"p{i}@example.org"), {"kind": "status"}) for i in range(4)], NOW)
    seen, left = [], []

    def after_accept():  # the marker is durable while the server may accept
        seen.append((json.loads((tmp_path / SENDING).read_text())["names"],
                     [e.name for e in spool.entries() if e.meta.get("sending")]))

    fsyncs.clear()
    result = spool.send_due(Box(), NOW, after_accept=after_accept,
                            after_send=lambda: left.append(spool.entries()))
    assert result.sent == 4
    assert len(fsyncs) == 3  # the marker (file + directory), then the directory once
    # the k-th acceptance finds the 4 marked and 4 - k entries still spooled
    assert [len(names) for names, _ in seen] == [4, 4, 4, 4]
    assert [len(entries) for _, entries in seen] == [4, 3, 2, 1]
    assert left == [[]]  # each accepted mail left the spool before the next was sent
    assert spool.entries() == [] and not (tmp_path / SENDING).exists()
    assert not list(tmp_path.glob("*.json"))


def test_a_crash_after_sending_keeps_the_marks(tmp_path):
    spool = Spool(tmp_path)
    a, b = spool.add_many([(mail("a@example.org"), {"kind": "status", "game": "g", "player": "A"}),
                           (mail("b@example.org"), {"kind": "status", "game": "g", "player": "B"})], NOW)

    class Killed(BaseException):
        pass

    def die():
        raise Killed

    with pytest.raises(Killed):  # killed once the server accepted the first mail
        spool.send_due(Box(), NOW, after_accept=die)
    again = Spool(tmp_path)  # the next cycle
    assert [e.name for e in again.entries()] == [a, b]
    assert all(e.meta["sending"] == NOW.isoformat() for e in again.entries())
    assert again.stale_status("g", "A") == []  # never merged into a newer one
    box = Box()
    assert again.send_due(box, NOW).sent == 2
    assert [str(m["Message-ID"]) for m in box.sent] == ["<a@example.org>", "<b@example.org>"]
    assert again.entries() == [] and not (tmp_path / SENDING).exists()


def test_deferred_and_failed_entries_lose_the_mark(tmp_path):
    spool = Spool(tmp_path)

    class Refused(Exception):
        def __init__(self, code):
            super().__init__(f"{code} no")
            self.code = code

    spool.add_many([(mail("a@example.org"), {"kind": "status", "game": "g", "player": "A"}),
                    (mail("b@example.org"), {"kind": "status", "game": "g", "player": "B"}),
                    (mail("c@example.org"), {})], NOW)
    result = spool.send_due(Box([Refused(421), Refused(550), None]), NOW)
    assert (result.sent, result.deferred, len(result.failed)) == (1, 1, 1)
    [left] = spool.entries()
    assert left.meta["attempts"] == 1 and "sending" not in left.meta
    assert json.loads(left.path.with_suffix(".json").read_text()).get("sending") is None
    assert [e.name for e in spool.stale_status("g", "A")] == [left.name]
    assert len(list((tmp_path / "failed").glob("*.eml"))) == 1
    assert not (tmp_path / SENDING).exists()


def test_marks_of_an_older_batch_not_due_now_are_kept(tmp_path):
    spool = Spool(tmp_path)
    old, new = spool.add_many([(mail("a@example.org"), {}), (mail("b@example.org"), {})], NOW)
    meta = json.loads((tmp_path / f"{old}.json").read_text())
    meta["next_try"] = "2999-01-01T00:00:00+00:00"
    (tmp_path / f"{old}.json").write_text(json.dumps(meta))
    (tmp_path / SENDING).write_text(json.dumps({"at": "2025-12-31T00:00:00+00:00", "names": [old]}))
    assert spool.send_due(Box(), NOW).sent == 1
    [left] = spool.entries()
    assert left.name == old and left.meta["sending"] == "2025-12-31T00:00:00+00:00"


def test_legacy_sending_in_the_json_is_honoured(tmp_path):
    spool = Spool(tmp_path)
    name = spool.add(mail("a@example.org"), {"kind": "status", "game": "g", "player": "A",
                                             "sending": "2025-01-01T00:00:00+00:00"}, NOW)
    assert spool.stale_status("g", "A") == []
    assert spool.send_due(Box(), NOW).sent == 1 and spool.entries() == []
    assert not (tmp_path / f"{name}.json").exists()


class Refused(Exception):
    """A transport's answer with an SMTP ``code`` (and the ``step`` that failed)."""

    def __init__(self, code, step=None):
        super().__init__(f"{code} no")
        self.code, self.step = code, step


def test_a_mail_deferred_after_an_interrupted_send_is_never_merged(tmp_path):
    """Killed after the server took the first mail (no 250 seen), then a 421 on
    its retry: it keeps ``maybe_sent``, is never offered for a merge, and is sent
    later as it is, with its Message-ID."""
    spool = Spool(tmp_path)
    a, b = spool.add_many([(mail("a@example.org"), {"kind": "status", "game": "g", "player": "A"}),
                           (mail("b@example.org"), {"kind": "status", "game": "g", "player": "B"})], NOW)

    class Killed(BaseException):
        pass

    def die():
        raise Killed

    with pytest.raises(Killed):
        spool.send_due(Box(), NOW, after_accept=die)
    spool = Spool(tmp_path)
    result = spool.send_due(Box([Refused(421), Refused(421)]), NOW)
    assert (result.sent, result.deferred, result.server_failure) == (0, 2, None)
    entries = spool.entries()
    assert [e.name for e in entries] == [a, b]
    assert all(e.meta["maybe_sent"] == NOW.isoformat() and "sending" not in e.meta for e in entries)
    assert spool.stale_status("g", "A") == [] and spool.stale_status("g", "B") == []
    box = Box()
    later = NOW.replace(hour=5)
    assert spool.send_due(box, later).sent == 2
    assert [str(m["Message-ID"]) for m in box.sent] == ["<a@example.org>", "<b@example.org>"]


def test_a_clean_421_leaves_the_mail_free_to_merge(tmp_path):
    spool = Spool(tmp_path)
    (name,) = spool.add_many([(mail("a@example.org"), {"kind": "status", "game": "g", "player": "A"})], NOW)
    assert spool.send_due(Box([Refused(421)]), NOW).deferred == 1
    assert [e.name for e in spool.stale_status("g", "A")] == [name]
    assert "maybe_sent" not in spool.entries()[0].meta


@pytest.mark.parametrize("answers, failure", [
    ([Refused(550), Refused(550), Refused(550)], "the SMTP server refused all 3 mails to 3 recipients with 550"),
    ([Refused(553, "MAIL FROM"), None, None], "the SMTP server refused the sender address (MAIL FROM)"),
    ([Refused(550), Refused(550), None], None),          # two players gone: bounces
    ([Refused(550), Refused(551), Refused(550)], None),  # different answers: bounces
])
def test_server_failure_or_bounces(tmp_path, answers, failure):
    spool = Spool(tmp_path)
    spool.add_many([(mail(f"p{i}@example.org"), {"kind": "status"}) for i in range(3)], NOW)
    result = spool.send_due(Box(answers), NOW)
    refused = sum(a is not None for a in answers)
    if failure is None:
        assert result.server_failure is None and len(result.failed) == refused
        assert [code for *_, code in result.failed] == [a.code for a in answers if a is not None]
    else:
        assert result.server_failure.startswith(failure)
        assert result.failed == [] and result.deferred == refused and not (tmp_path / "failed").exists()
    assert result.sent == 3 - refused


def test_one_mail_refused_with_5xx_is_a_bounce(tmp_path):
    spool = Spool(tmp_path)
    spool.add(mail("a@example.org"), {"kind": "status"}, NOW)
    result = spool.send_due(Box([Refused(550)]), NOW)
    assert result.server_failure is None and len(result.failed) == 1


def test_a_login_refused_defers_the_whole_batch(tmp_path):
    from moderator.mail.transport import TransportError

    class Down:
        def send_many(self, msgs, on_result=None):
            raise TransportError("SMTP x:25: login as 'up' failed: 535 5.7.8 bad credentials", code=535)

    spool = Spool(tmp_path)
    spool.add_many([(mail(f"p{i}@example.org"), {"kind": "status"}) for i in range(2)], NOW)
    result = spool.send_due(Down(), NOW)
    assert result.failed == [] and result.deferred == 2 and "535" in result.server_failure
    assert result.errors == ["2 mail(s) deferred: SMTP x:25: login as 'up' failed: 535 5.7.8 bad credentials"]


def test_orphan_metadata_is_listed(tmp_path):
    spool = Spool(tmp_path)
    spool.add(mail("a@example.org"), {}, NOW)
    (tmp_path / "x.json").write_text("{}")
    (tmp_path / "failed").mkdir()
    (tmp_path / "failed" / "y.json").write_text("{}")
    assert spool.orphans() == [tmp_path / "x.json", tmp_path / "failed" / "y.json"]
    assert len(spool.entries()) == 1
