"""Tests of the protocol area (CONTRIBUTING.md has the map)."""
