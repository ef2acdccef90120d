"""Tournaments: a file of bots and a format become a schedule of real matches, played N at a
time (or by workers on several machines), stored, and turned into standings and ratings."""
