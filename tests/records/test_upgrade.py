"""Records written by the release before protocol 1.0 (format 1) still read and verify."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from medina.records.reader import read_record
from medina.records.upgrade import upgrade_line
from medina.records.verify import verify_record
from medina.v1 import match_pb2

V1 = sorted((Path(__file__).parent / "v1").glob("*.jsonl"))


def test_the_format_1_fixtures_are_there() -> None:
    assert len(V1) == 3  # one per ruleset, written by medina-arena 0.1 selfplay
    for path in V1:
        first = json.loads(path.read_text().splitlines()[0])
        assert first["header"]["formatVersion"] == 1


@pytest.mark.parametrize("path", V1, ids=[p.stem for p in V1])
def test_a_format_1_record_verifies(path: Path) -> None:
    record = read_record(path)
    report = verify_record(record)
    assert report.ok and report.complete, report.summary()
    assert record.outcome is not None
    assert record.outcome.result.ending == match_pb2.MATCH_ENDING_COMPLETE
    assert record.header.started_at.seconds > 0  # RFC 3339 text is a Timestamp's JSON too


def test_upgrading_a_line_undoes_each_change() -> None:
    header = {
        "header": {
            "formatVersion": 1,
            "setup": {"well": -1, "startMerchant": -1},
            "config": {"timeControl": {"decisionMs": 100}, "policies": {"maxStrikes": 2}},
        }
    }
    up = upgrade_line(header, 1)["header"]
    assert up["setup"] == {} and up["formatVersion"] == 2
    assert up["config"]["timeControl"] == {
        "decisionMs": 100,
        "bankMs": 0,  # format 1 left a zero out; it meant zero
        "incrementMs": 0,
        "firstDecisionExtraMs": 0,
        "graceMs": 0,
    }
    assert up["config"]["policies"] == {"maxStrikes": 2, "maxRejections": 0, "reconnectGraceMs": 0}
    incident = upgrade_line({"incident": {"kind": "INCIDENT_KIND_ABORTED", "seat": -1}}, 1)
    assert "seat" not in incident["incident"]
    outcome = upgrade_line(
        {"outcome": {"result": {"seats": [{"breakdown": {"palaces": [{"roofSquare": 9}]}}]}}}, 1
    )
    result = outcome["outcome"]["result"]
    assert result["ending"] == "MATCH_ENDING_ABORTED"  # no "complete": true
    assert result["seats"][0]["breakdown"]["palaces"] == [{"rooftopSquare": 9}]
    assert upgrade_line({"incident": {"seat": -1}}, 2) == {"incident": {"seat": -1}}
