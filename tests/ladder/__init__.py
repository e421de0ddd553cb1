"""Tests of the ladder area (CONTRIBUTING.md has the map)."""
