"""Tests of the confinement area (CONTRIBUTING.md has the map)."""
