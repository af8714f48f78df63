"""Storage: game files (the YAML archive), the outgoing spool and the moderator's bookkeeping."""
