"""Medina Arena: rules engine, referee and gRPC server for the board game Medina."""
