"""Tests of the project area (CONTRIBUTING.md has the map)."""
