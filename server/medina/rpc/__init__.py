"""The gRPC layer: servicers, seat transport, conversion calls, auth and limits. No game logic.

- ``common``: what both kinds of server share (statuses, auth, limits, the organiser service).
- ``single``: the single-process server (``serve --workers 1``, and each worker process).
- ``cluster``: the front of ``serve --workers N``, its worker pool and routes.
- ``organiser``: the organiser's side, a client: CreateMatch retried as a server asks.
"""
