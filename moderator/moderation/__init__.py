"""The moderation pipeline: what one cycle does with each mail, and the units it composes."""
