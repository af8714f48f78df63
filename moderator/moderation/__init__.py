"""The moderation pipeline: what one cycle does with each mail, one stage a module.

Data flows one way::

    bytes → mail → (game, player) → orders → verdict → new game state + outgoing mails → spool

* ``mail.read.read_mail`` (bytes → ``OrderMail``; never raises) and
  ``interpret.mail_id`` (the mail's key: Message-ID, else its delivery key, a
  hash that ignores transport headers);
* ``decide.screen``: duplicates, machine mail and bounces, unreadable mail
  (``decide.once``: an unauthenticated sender is answered once per mail, apart
  from the duplicate record);
* ``route``: which game (Subject tag, references, the sender's games);
* ``authenticate``: which player (From address and secret);
* ``interpret``: commands and the one order of the mail (``parse_turn``; a
  complete turn above lines it cannot read, such as a signature, is found too);
* ``decide``: the ``verdict`` (frozen dataclasses: ``Apply``, ``Refuse`` with a
  named reason, ``Answer``, ``Duplicate``, ``Ignore``, ``RecordBounce``);
* ``act``: the one place a verdict changes a game or spools mail, keyed by the
  verdict's mail key;
* ``commands``: the answers to ``help``, ``status``, ``history``, ``rules``,
  ``secret new``;
* ``notify``: the status mails after a change; ``send``: the spool, sending,
  operator alerts; ``inbox``: fetching and moving mails; ``create``: new games;
* ``deadlines``: the game clock's values (durations, deadlines in force,
  ``tick``); ``clock``: its stage (``run_clock``, ``catch_up``, saved with its
  notices); ``gm``: the game master's commands; ``seats``: resign, digest;
  ``observers``: observers' mails; ``announce``: notices to everyone;
  ``advance``: orders in advance (``next:``), played when the turn comes, and
  standing choices (``auto``);
* ``cycle``: ``Moderator``, the composition (``run_cycle``, ``create_game``,
  ``status_mail``); ``faults``: crash points for the tests.

The modules import one way (layers in docs/architecture.md, checked by
tests/test_import_graph.py).

Every word a player or the operator reads is in ``templates/`` (refusals and
notices: ``templates/words/notices.txt``, one macro per name).
"""
