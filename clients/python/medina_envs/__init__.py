"""Medina for agents that learn: the standard environment APIs over the engine in process.

The observation every environment gives an agent is the fixed encoding of what the arena
would send its seat (docs/encoding.md, ``medina_client.encoding``).
"""
