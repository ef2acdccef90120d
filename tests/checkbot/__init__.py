"""Tests of the check-bot kit: its referee hooks, scenario positions, judging and report."""
