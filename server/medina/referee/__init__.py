"""The referee: runs one match between seats, owns the clock, applies policies, writes records.

It knows nothing of gRPC or sockets: it talks to ``Seat`` objects and a ``RecordSink``.
"""
