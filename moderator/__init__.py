"""pbem: a play-by-email moderator for Union Pacific.  See README.md and docs/architecture.md."""

#: The version (setup.cfg reads it from here; ``pbem --version`` prefers the
#: installed distribution's metadata and falls back to this in a source tree).
__version__ = "0.2.0"
