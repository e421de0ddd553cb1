"""Tests of the env area (CONTRIBUTING.md has the map)."""
