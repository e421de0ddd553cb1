"""Tests of the tournament area (CONTRIBUTING.md has the map)."""
