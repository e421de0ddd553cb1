"""Tests of the play area (CONTRIBUTING.md has the map)."""
