"""The messages a client builds (wire/shared/client.py) read back as the server reads them."""

from __future__ import annotations

import pytest
from medina.wire.settings import settings_from_proto
from medina.wire.shared.client import create_match


def test_create_match_names_the_ruleset_and_leaves_the_rest_to_the_server() -> None:
    request = create_match("medina-v1-2p", 2, 17)
    settings = settings_from_proto(request.config)
    assert (settings.ruleset, settings.players, settings.seed) == ("medina-v1-2p", 2, 17)
    assert not request.config.HasField("time_control") and request.request_id == ""


def test_create_match_refuses_an_unknown_ruleset_by_name() -> None:
    with pytest.raises(ValueError, match=r"unknown ruleset 'medina-v3'.*medina-v2"):
        create_match("medina-v3", 2, 1)
