"""Tests of the rules area (CONTRIBUTING.md has the map)."""
