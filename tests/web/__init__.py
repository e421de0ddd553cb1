"""Tests of the web area (CONTRIBUTING.md has the map)."""
