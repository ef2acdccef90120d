"""What the examples' command lines share: their numeric options, checked before any work,
each bad value a one-line usage error (exit 2) naming the option."""

from __future__ import annotations

import argparse

from medina_envs.core import MAX_GAME_SEED

__all__ = ["check_at_least", "check_seed"]


def check_at_least(p: argparse.ArgumentParser, option: str, value: int, least: int) -> None:
    """A usage error unless ``value`` (given as ``option``) is at least ``least``."""
    if value < least:
        p.error(f"{option} must be at least {least}, got {value}")


def check_seed(p: argparse.ArgumentParser, seed: int) -> None:
    """A usage error unless ``--seed`` is a seed the examples draw from (0..2**31-1)."""
    if not 0 <= seed <= MAX_GAME_SEED:
        p.error(f"--seed must be in 0..{MAX_GAME_SEED}, got {seed}")
