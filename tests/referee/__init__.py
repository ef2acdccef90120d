"""Tests of the referee: configuration, clocks, outcomes, records and the match loop."""
