"""pbem: a play-by-email moderator for Union Pacific.  See README.md and docs/architecture.md."""
