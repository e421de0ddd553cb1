"""The tournament runner, ``cirulla tournament`` (docs/tournament.md): schedules, the
results tables and their statistics, over the shared match layer."""
