"""A front's routes: match id and seat token -> worker, the newest ones only."""

from __future__ import annotations

import pytest
from medina.rpc.cluster.routes import Route, Routes


def test_routes_by_match_and_token_and_the_oldest_are_forgotten() -> None:
    routes = Routes(limit=2)
    routes.add("m1", ["t1a", "t1b"], Route(0, 1))
    routes.add("m2", ["t2a"], Route(1, 1))
    assert routes.match("m1") == Route(0, 1)
    assert routes.token("t1b") == ("m1", Route(0, 1))
    assert routes.token("unknown") is None
    assert routes.held_by(Route(1, 1)) == ["m2"]
    routes.add("m3", ["t3a"], Route(0, 2))
    assert len(routes) == 2
    assert routes.match("m1") is None and routes.token("t1a") is None
    assert routes.token("t3a") == ("m3", Route(0, 2))
    assert routes.held_by(Route(0, 1)) == []


def test_a_route_table_must_hold_something() -> None:
    with pytest.raises(ValueError, match="at least 1, got 0"):
        Routes(limit=0)
