"""Tests of the bots area (CONTRIBUTING.md has the map)."""
