"""Tests of the server area (CONTRIBUTING.md has the map)."""
