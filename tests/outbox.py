"""Reading a test's outbox Maildir as a player's mail reader would."""
from __future__ import annotations

import mailbox
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

from moderator.mail.transport.maildir import delivery_order


def unseen_mails(box: mailbox.Maildir, seen: set[str]) -> list[EmailMessage]:
    """The mails of ``box`` whose keys are not in ``seen``, in delivery order
    (``delivery_order``: the order the moderator delivered them, not the keys'
    text order), parsed with ``policy.default``; their keys are added to ``seen``."""
    out = []
    for key in sorted(box.keys(), key=delivery_order):
        if key not in seen:
            seen.add(key)
            with box.get_file(key) as fh:
                out.append(BytesParser(policy=policy.default).parse(fh))
    return out
