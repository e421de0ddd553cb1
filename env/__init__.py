"""Environments for learning agents on the Cirulla rules core (NumPy needed: the ``env`` extra).

``cirulla.env.encoding`` defines the one observation and action encoding; ``cirulla.env.vector``
steps one game (``Env``) or many (``VectorEnv``) in it. The ecosystem wrappers build on these.
"""
