"""Tests of the rules engine: one file per rule area, pictures for positions, seeded playouts."""
