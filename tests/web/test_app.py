"""The viewer over plain HTTP: read-only routes, clear errors, the live event stream and
/metrics counting what the records hold."""

from __future__ import annotations

import asyncio
import gzip
import json
import math
import os
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from e2e.rawbot import RawBot
from medina.referee.config import MatchSettings, TimeControl
from medina.rpc.common.limits import Limits
from medina.v1 import arena_pb2, game_pb2

from .conftest import ArenaThread, choose_randomly, finished_id
from .sse import get, read_events

ROUTES = ["/", "/api/matches", "/standings", "/metrics", "/static/viewer.css"]


def fetch(url: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_nothing_changes_state_every_route_is_read_only(arena: ArenaThread, method: str) -> None:
    match_id = finished_id(arena)
    paths = [*ROUTES, f"/live/{match_id}", f"/replay/{match_id}"]
    for path in paths:
        status, _headers, body = fetch(arena.url + path, method)
        assert status == 405, f"{method} {path} answered {status}"
        assert b"read-only" in body


def test_pages_carry_a_strict_content_security_policy(arena: ArenaThread) -> None:
    for path in ROUTES:
        status, headers, _body = fetch(arena.url + path)
        assert status == 200, path
        policy = headers["content-security-policy"]
        assert "default-src 'self'" in policy
        # not covered by default-src: an injected <base> or <form> would go elsewhere
        assert "base-uri 'none'" in policy and "form-action 'none'" in policy
        assert headers["x-content-type-options"] == "nosniff"


def test_malformed_requests_leave_nothing_in_the_log(
    arena: ArenaThread, caplog: pytest.LogCaptureFixture
) -> None:
    # uvicorn logged a WARNING for every malformed request: 2,000 requests, 2,000 lines.
    async def garbage() -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", arena.http.port)
        writer.write(b"NOT HTTP AT ALL\r\n\r\n")
        await writer.drain()
        answer = await reader.read()
        writer.close()
        return answer

    for _ in range(3):
        answer = arena.call(garbage())
        assert answer.startswith(b"HTTP/1.1 400"), answer
    assert [r.getMessage() for r in caplog.records if r.name.startswith("uvicorn")] == []


def test_the_match_list_as_json(arena: ArenaThread) -> None:
    match_id = finished_id(arena)
    _status, _headers, body = fetch(f"{arena.url}/api/matches")
    rows = {r["match_id"]: r for r in json.loads(body)}
    row = rows[match_id]
    assert row["state"] == "finished" and row["players"] == 4
    assert row["replay"] == f"/replay/{match_id}" and row["live"] == f"/live/{match_id}"
    assert row["bots"] == ["random-0", "random-1", "random-2", "random-3"]
    assert len(row["scores"]) == 4


def test_unknown_matches_and_records_are_named_in_the_error(arena: ArenaThread) -> None:
    status, _h, body = fetch(f"{arena.url}/live/nosuchmatch")
    assert status == 404 and b"no match &#x27;nosuchmatch&#x27; is hosted here" in body
    status, _h, body = fetch(f"{arena.url}/api/live/nosuchmatch/events")
    assert status == 404 and json.loads(body) == {"error": "no match 'nosuchmatch' is hosted here"}
    status, _h, body = fetch(f"{arena.url}/replay/nosuchrecord")
    assert status == 404 and b"no record &#x27;nosuchrecord&#x27;" in body
    status, _h, body = fetch(f"{arena.url}/api/records/..secret/replay")
    assert status == 404 and "is not a record id" in json.loads(body)["error"]
    status, _h, body = fetch(f"{arena.url}/api/records/..%2Fsecret/replay")
    assert status == 404 and b"no page /api/records/../secret/replay" in body


def test_no_page_or_error_reveals_where_the_records_are_kept(arena: ArenaThread) -> None:
    records = arena.running.arena.records_dir
    secret = [str(records).encode(), str(records.resolve()).encode()]
    (records / "junk.jsonl").write_text("not json\n")
    try:
        answers = {
            path: fetch(arena.url + path)
            for path in [
                "/",
                "/api/matches",
                "/replay/absent",
                "/api/records/absent/replay",
                "/live/absent",
                "/api/records/junk/replay",
            ]
        }
    finally:
        (records / "junk.jsonl").unlink()
    for path, (_status, _headers, body) in answers.items():
        assert not any(s in body for s in secret), f"{path} names the records directory"
    assert answers["/replay/absent"][0] == 404
    assert b"no record &#x27;absent&#x27; in the records directory" in answers["/replay/absent"][2]
    junk = json.loads(answers["/api/records/junk/replay"][2])["error"]
    assert junk.startswith("record 'junk' cannot be read: junk.jsonl line 1: not JSON"), junk
    (row,) = [r for r in json.loads(answers["/api/matches"][2]) if r["match_id"] == "junk"]
    assert row["state"] == "unreadable" and "junk.jsonl" in row["note"]


def test_a_record_that_is_not_hosted_opens_as_a_replay(arena: ArenaThread) -> None:
    records = arena.running.arena.records_dir
    source = next(records.glob("*.jsonl"))
    (records / "copied.jsonl").write_bytes(source.read_bytes())
    try:
        request = urllib.request.Request(f"{arena.url}/live/copied")
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.url.endswith("/replay/copied")
    finally:
        (records / "copied.jsonl").unlink()


def test_a_record_downloads_as_the_arena_wrote_it(arena: ArenaThread) -> None:
    match_id = finished_id(arena)
    status, headers, body = fetch(f"{arena.url}/api/records/{match_id}/record.jsonl")
    assert status == 200
    assert body == (arena.running.arena.records_dir / f"{match_id}.jsonl").read_bytes()
    assert headers["content-disposition"] == f'attachment; filename="{match_id}.jsonl"'
    assert headers["content-type"].startswith("application/x-ndjson")
    status, _h, body = fetch(f"{arena.url}/api/records/absent/record.jsonl")
    assert status == 404 and json.loads(body)["error"].startswith("no record 'absent'")


def test_the_live_stream_of_a_match_not_played_here_says_how_its_record_ended(
    arena: ArenaThread,
) -> None:
    records = arena.running.arena.records_dir
    source = next(records.glob("*.jsonl"))
    lines = source.read_bytes().splitlines(keepends=True)
    (records / "ended.jsonl").write_bytes(source.read_bytes())
    (records / "cut.jsonl").write_bytes(b"".join(lines[:-1]))  # no outcome: a crash
    try:
        answers = {name: fetch(f"{arena.url}/api/live/{name}/events") for name in ("ended", "cut")}
    finally:
        (records / "ended.jsonl").unlink()
        (records / "cut.jsonl").unlink()
    assert {name: status for name, (status, _h, _b) in answers.items()} == {
        "ended": 404,
        "cut": 404,
    }
    assert json.loads(answers["ended"][2]) == {
        "error": "match 'ended' is not being played here any more: it has finished",
        "state": "finished",
        "replay": "/replay/ended",
    }
    assert json.loads(answers["cut"][2]) == {
        "error": "match 'cut' is not hosted here; its record is unfinished: no outcome line "
        "yet (still being played, or its server stopped during the match)",
        "state": "interrupted",  # the JSON's name, kept for programs that read it
        "replay": "/replay/cut",
    }


def test_the_event_stream_of_a_finished_match_is_one_end_message(arena: ArenaThread) -> None:
    match_id = finished_id(arena)
    events = arena.call(read_events("127.0.0.1", arena.http.port, f"/api/live/{match_id}/events"))
    assert [e for e, _data in events] == ["end"]
    data = events[0][1]
    assert data["result"]["ending"] == "complete"
    assert [w.keys() for w in data["watch"]] == [{"snapshot"}, {"result"}]
    assert data["view"]["phase"] == "over"
    # The whole story comes with the first message: a point per decision, from the start.
    hosted = arena.running.arena.get(match_id)
    assert hosted is not None
    assert [p["step"] for p in data["story"]] == list(range(hosted.match.state.decisions + 1))
    assert data["story"][-1]["scores"] == [s["total"] for s in data["result"]["seats"]]


def metric(text: str, name: str) -> float:
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    assert found, f"{name} not in /metrics"
    return float(found.group(1))


def test_metrics_count_decisions_latency_and_misbehaviour_by_bot(
    tmp_path: Path,
) -> None:
    a = ArenaThread(tmp_path)
    try:
        settings = MatchSettings(
            "medina-v2",
            3,
            9,
            time=TimeControl(decision_ms=200, first_decision_extra_ms=0),
            connect_timeout_ms=2000,
        )
        hosted = a.create(settings)
        requests = [0]
        randomly = choose_randomly(3)

        def cheat(request: arena_pb2.DecisionRequest, attempt: int) -> game_pb2.Action | None:
            if attempt == 0:
                requests[0] += 1
                if requests[0] == 1:
                    return None  # let the clock run out: a timeout strike
                if requests[0] == 2:
                    return game_pb2.Action(kind=game_pb2.ACTION_KIND_WALL, square=0)  # a tower
            action: game_pb2.Action = randomly(request, attempt)
            return action

        async def play() -> None:
            bots = [
                RawBot(a.running.address, hosted.tokens[0], chooser=cheat, name="cheat"),
                RawBot(a.running.address, hosted.tokens[1], chooser=choose_randomly(4), name="ok"),
            ]  # seat 2 never connects: it forfeits as a no-show
            for bot in bots:
                bot.keep_status = True
            await asyncio.gather(*(b.play() for b in bots))
            await hosted.match.wait_done()

        a.call(play(), timeout=120)
        _s, headers, body = fetch(f"{a.url}/metrics")
        assert headers["content-type"].startswith("text/plain")
        text = body.decode()
        decisions = hosted.match.state.decisions
        total = sum(
            metric(text, f'medina_decisions_total{{source="{s}"}}')
            for s in ("bot", "timeout", "fallback")
        )
        assert total == decisions
        assert metric(text, 'medina_decisions_total{source="timeout"}') == 1
        assert metric(text, 'medina_bot_timeouts_total{bot="cheat"}') == 1
        assert metric(text, 'medina_bot_illegal_replies_total{bot="cheat"}') == 1
        forfeits = re.findall(
            r'^medina_bot_forfeits_total\{bot="([^"]*)",termination="(\w+)"\} 1', text, re.M
        )
        assert [t for _b, t in forfeits] == ["no_show"]
        assert metric(text, 'medina_matches_finished_total{ending="complete"}') == 1
        assert metric(text, "medina_decision_latency_seconds_count") == metric(
            text, 'medina_decisions_total{source="bot"}'
        )
        assert metric(text, "medina_matches_running") == 0
        assert metric(text, "medina_grpc_streams_open") == 0
        assert metric(text, "medina_http_event_streams_open") == 0
        assert metric(text, "medina_event_loop_lag_seconds") >= 0
        turnaround = metric(text, "medina_turnaround_p99_seconds")  # NaN: too few decisions
        assert math.isnan(turnaround) or 0 <= turnaround < 60
        assert metric(text, "medina_create_match_refused_total") == 0
        assert metric(text, "medina_decisions_per_second") >= 0
        assert metric(text, "medina_records_unwritable") == 0
        assert metric(text, "medina_record_write_failures_total") == 0
        # Less free where records go than the reserve asks: the gauge says so when scraped.
        st = os.statvfs(tmp_path)
        a.running.arena.space.reserve_bytes = st.f_bavail * st.f_frsize + 10**9
        _s, _h, body = fetch(f"{a.url}/metrics")
        assert metric(body.decode(), "medina_records_unwritable") == 1
    finally:
        a.close()


def test_live_streams_count_against_the_clients_stream_limit(tmp_path: Path) -> None:
    a = ArenaThread(tmp_path, limits=Limits(max_streams_per_client=1, limit_loopback=True))
    try:
        hosted = a.create(MatchSettings("medina-v2", 2, 1))
        path = f"/api/live/{hosted.match_id}/events"

        async def two_streams() -> tuple[int, str]:
            reader, writer = await asyncio.open_connection("127.0.0.1", a.http.port)
            # A header naming another client changes nothing: a client is its address
            # (trusted, the header let anyone escape the limit, or fill another's).
            writer.write(f"GET {path} HTTP/1.0\r\nX-Forwarded-For: 192.0.2.7\r\n\r\n".encode())
            await writer.drain()
            assert b"200" in await reader.readline()  # the first stream is open
            status, _headers, body = await get("127.0.0.1", a.http.port, path)
            writer.close()
            return status, json.loads(body)["error"]

        status, error = a.call(two_streams())
        assert status == 429
        assert "already has 1 open streams (the limit is 1)" in error
        hosted.match.abort("test over")
        a.call(hosted.match.wait_done())
    finally:
        a.close()


def test_a_replay_is_sent_gzipped_to_clients_that_accept_it(arena: ArenaThread) -> None:
    match_id = finished_id(arena)
    url = f"{arena.url}/api/records/{match_id}/replay"
    _s, headers, plain = fetch(url)
    assert "content-encoding" not in {k.lower() for k in headers}
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.headers["Content-Encoding"] == "gzip"
        packed = response.read()
    assert gzip.decompress(packed) == plain
    assert len(packed) * 10 < len(plain)
    assert json.loads(plain)["match_id"] == match_id


def revalidate(url: str, etag: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """GET ``url`` as a browser asks again for what it has (``If-None-Match``)."""
    request = urllib.request.Request(url, headers={"If-None-Match": etag, **headers})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


@pytest.mark.parametrize(
    "headers",
    [{}, {"Accept-Encoding": "gzip"}],
    ids=["plain", "gzip"],
)
def test_a_replay_asked_again_unchanged_is_a_304_without_a_body(
    arena: ArenaThread, headers: dict[str, str]
) -> None:
    match_id = finished_id(arena)
    url = f"{arena.url}/api/records/{match_id}/replay"
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as r:
        assert r.headers["Cache-Control"] == "no-cache"
        etag = r.headers["etag"]
        assert etag.startswith('"') and len(r.read()) > 1000
    status, got, body = revalidate(url, etag, **headers)
    assert (status, body, got["etag"], got["vary"]) == (304, b"", etag, "Accept-Encoding")
    # The other encoding is another representation: never validated by this one's tag.
    other = {} if headers else {"Accept-Encoding": "gzip"}
    status, got, body = revalidate(url, etag, **other)
    assert status == 200 and got["etag"] != etag and len(body) > 1000


def test_a_record_that_grew_is_sent_again_and_its_download_revalidates(
    arena: ArenaThread,
) -> None:
    records = arena.running.arena.records_dir
    source = records / f"{finished_id(arena)}.jsonl"
    lines = source.read_bytes().splitlines(keepends=True)
    growing = records / "growing.jsonl"
    growing.write_bytes(b"".join(lines[:-1]))  # a match still being played: no outcome yet
    try:
        for path in ("/api/records/growing/replay", "/api/records/growing/record.jsonl"):
            _s, headers, before = fetch(f"{arena.url}{path}")
            etag = headers["etag"]
            assert headers["cache-control"] == "no-cache"
            assert revalidate(f"{arena.url}{path}", etag)[:1] == (304,)
            growing.write_bytes(b"".join(lines))  # its outcome is written
            status, headers, after = revalidate(f"{arena.url}{path}", etag)
            assert status == 200 and headers["etag"] != etag and after != before
            assert revalidate(f"{arena.url}{path}", headers["etag"])[:1] == (304,)
            growing.write_bytes(b"".join(lines[:-1]))
    finally:
        growing.unlink()


def test_scripts_and_styles_are_checked_again_at_every_use(arena: ArenaThread) -> None:
    # No heuristic freshness: after an upgrade, a page never runs the older scripts.
    for name in ("board.js", "live.js", "viewer.css"):
        status, headers, body = fetch(f"{arena.url}/static/{name}")
        assert status == 200 and body and headers["cache-control"] == "no-cache"
        status, _again, body = revalidate(f"{arena.url}/static/{name}", headers["etag"])
        assert (status, body) == (304, b"")
