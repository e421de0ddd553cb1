"""Cirulla: rules engine, gRPC match server, bots and tournament runner."""

__version__ = "0.1.0"
PROTOCOL_VERSION = "cirulla.v1/1"
