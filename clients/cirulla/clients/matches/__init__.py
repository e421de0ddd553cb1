"""The layer the tournament runner, the ladder and the terminal client share: refereeing
one game over the protocol, supervising bot processes (and their sandboxes), seeding
schedules and the results every runner writes (docs/layout.md)."""
