"""The text engine protocol (docs/text-protocol.md): bridge, engine, checker."""
