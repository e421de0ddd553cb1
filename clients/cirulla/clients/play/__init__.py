"""People at the table: ``cirulla play`` (a human seat in the terminal) and ``cirulla watch``
(a terminal spectator). Both are ordinary clients of the public protocol: the human's
seat is a Play stream like a bot's, and what is shown about the other seats comes from
the Spectate stream, which the server fills with public information only.
"""
