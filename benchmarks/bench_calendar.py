"""Benchmark of the deadline's calendar event in a status mail (issue 28).

    python benchmarks/bench_calendar.py [--repeats N]

Builds the on-move status mail of a real game (the welcome's position, three
players, a 72-hour deadline) and flattens it as it is spooled
(``compose.flatten``), alternately with its calendar event (``REQUEST``,
``moderation/calendar.calendar_parts``, built by ``icalendar``) and without it
(``calendar off``), ``--repeats`` times each; and the VCALENDAR text alone
(``mail.calendar.to_ical``).  Ends with lines ``NAME: VALUE``: the medians in
milliseconds and ``status_mail_with_event_vs_without`` (their ratio, measured
side by side in this one run: the machines here are shared and noisy).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from moderator.config import Config  # noqa: E402
from moderator.mail.calendar import DeadlineEvent, to_ical  # noqa: E402
from moderator.mail.compose import flatten  # noqa: E402
from moderator.moderation import notify  # noqa: E402
from moderator.moderation.cycle import Moderator  # noqa: E402
from moderator.store.gamefile import GameStore  # noqa: E402

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        config = Config(games_dir=base / "games", maildir_inbox=base / "mail" / "inbox",
                        maildir_outbox=base / "mail" / "outbox", spool_dir=base / "spool")
        mod = Moderator(config, clock=lambda: T0)
        mod.create_game("bench", [("Ann", "ann@example.org"), ("Bob", "bob@example.org"),
                                  ("Cy", "cy@example.net")], seed=5, settings={"deadline": 72 * 3600})
        record = GameStore(config.games_dir).load("bench")
        post = mod._post()
        ann = record.player_by_name("Ann")

        def build(with_event: bool) -> float:
            record.calendar_off = [] if with_event else ["Ann"]
            record.calendar.clear()  # a new event each time (the welcome's REQUEST), none without
            start = time.perf_counter()
            flatten(notify.status_mail(post, record, ann, []))
            return time.perf_counter() - start

        build(True), build(False)  # warm: templates, the map's fonts
        with_event, without = [], []
        for _ in range(args.repeats):
            with_event.append(build(True))
            without.append(build(False))
        event = DeadlineEvent(method="REQUEST", uid="move-1.0123456789ab.bench.pbem@example.org", sequence=0,
                              start=T0 + timedelta(hours=72), length=timedelta(minutes=15), stamp=T0,
                              summary="Union Pacific bench: your move",
                              description="Your move is due by 2026-12-04 12:00 UTC.\n\nTo move, answer the "
                                          "moderator's latest mail of game bench with your order.",
                              organizer="pbem@example.org", organizer_name="pbem", attendee="ann@example.org",
                              alarm=timedelta(hours=3))
        ical = []
        for _ in range(args.repeats * 5):
            start = time.perf_counter()
            to_ical(event)
            ical.append(time.perf_counter() - start)
        mod.close()
    a, b = statistics.median(with_event), statistics.median(without)
    print(f"status_mail_with_event_ms: {a * 1000:.2f}")
    print(f"status_mail_without_event_ms: {b * 1000:.2f}")
    print(f"status_mail_with_event_vs_without: {a / b:.3f}")
    print(f"to_ical_ms: {statistics.median(ical) * 1000:.2f}")


if __name__ == "__main__":
    main()
