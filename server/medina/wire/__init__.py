"""Conversion between plain domain data (engine, referee) and ``medina.v1`` messages.

No gRPC, no game logic, no visibility decisions: it converts what it is given.
"""
