"""protobuf <-> server domain, in three modules with one naming convention (``X_pb``
builds a protobuf message, ``X_from_pb`` reads one): ``settings`` (match settings and
submitted actions), ``live`` (the Play and Spectate streams) and ``records`` (summaries
and records)."""
