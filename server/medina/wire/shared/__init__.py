"""The part of ``wire/`` the SDK ships too (in the ``medina-protocol`` distribution):
engine data <-> ``medina.v1`` messages for what both sides read and write (actions, legal
actions, events, observations, scores, the numbering of enums), the protocol's version and
features, and the messages a bot sends. It imports only the engine, the generated messages
and the standard library, so a bot gets the server's own conversions, not copies."""
