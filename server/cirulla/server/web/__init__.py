"""The web view of ``cirulla server --http``: match list, live view, replay viewer.

A Starlette app served by uvicorn on the gRPC server's own event loop. It is a client
of the public protocol like any other (ListMatches, Spectate, ListRecords, GetRecord,
without the admin token), so it can only show what a spectator may see: live games
come from the Spectate stream (public events and views, never a hand), and a record
is only served once the server serves it to anyone.
"""
