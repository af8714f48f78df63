"""The game: components, board, the rules engine, actions, dividends, rulesets and options.

Pure: no I/O, no clock, no randomness but generators seeded by the game's seed."""
