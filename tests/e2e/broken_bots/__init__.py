"""Deliberately broken bots for check-bot's tests; run as ``python -m e2e.broken_bots.NAME``
with ``tests`` on PYTHONPATH."""
