"""Bots that play Cirulla as ordinary players over the match protocol.

Write one decision function (a ``View`` and the numbered legal actions in, an index out);
the kit (``cirulla.bots.kit``) does the connection, handshake, reconnects, clock and
logging. Built-in kinds: ``random``, ``greedy``, ``mcts``, ``policy`` and ``learned``
(``cirulla.bots.specs.KINDS``; docs/bots.md). A bot spec is read by
``cirulla.bots.botspec.BotSpec.parse``; policies are ``cirulla.bots.policy.Policy``.

The package re-exports nothing: each name is imported from its module, so importing one
module (the compiled search's ``cirulla.bots._search`` among them) never loads the others.
"""
