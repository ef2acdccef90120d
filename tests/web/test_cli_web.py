"""``medina-arena web``, ``serve --http`` and ``match --http`` as a user runs them: the URL
printed, the pages served, a clean stop on SIGTERM/SIGINT, clear refusals."""

from __future__ import annotations

import json
import re
import resource
import select
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from medina.cli import main
from medina.cli.web_cmd import WEB_FILES_KEPT
from medina.ladder import accounts
from medina.storage.ladder import LadderStore

from .test_view import write_match

ARENA = [sys.executable, "-m", "medina.cli"]
URL = re.compile(r"(http://127\.0\.0\.1:\d+)/")
pytestmark = pytest.mark.timeout(180)


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as response:
        body: bytes = response.read()
        return body


def lines_until(proc: subprocess.Popen[str], pattern: str) -> Iterator[str]:
    """Lines of the process's output up to the first that contains ``pattern``."""
    assert proc.stdout is not None
    for line in proc.stdout:
        yield line
        if pattern in line:
            return
    raise AssertionError(f"the output ended before {pattern!r} (exit {proc.wait()})")


def stop(proc: subprocess.Popen[str], sig: signal.Signals = signal.SIGTERM) -> int:
    proc.send_signal(sig)
    try:
        return proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_web_serves_a_records_directory_until_sigterm(tmp_path: Path) -> None:
    write_match(tmp_path, "stored")
    proc = subprocess.Popen(
        [*ARENA, "web", "--records", str(tmp_path), "--http", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        (line,) = list(lines_until(proc, "viewer on"))
        assert f"(records in {tmp_path})" in line
        found = URL.search(line)
        assert found
        base = found.group(1)
        assert b'data-match="stored"' in get(base + "/")
        replay = json.loads(get(base + "/api/records/stored/replay"))
        assert replay["complete"] and len(replay["frames"]) == len(replay["moves"]) + 1
        assert b"No tournament database configured" in get(base + "/standings")
        assert b"medina_http_event_streams_open 0.0" in get(base + "/metrics")
    finally:
        code = stop(proc)
    assert code == 0


def test_web_keeps_its_connections_within_its_open_files_limit(tmp_path: Path) -> None:
    # `web` took connections until the process ran out of files: accept() then failed at
    # every turn of the loop (75,669 log lines in 3 s) and pages answered 500. Past its
    # share of the limit a connection is answered 503 and closed.
    write_match(tmp_path, "stored")
    log = tmp_path / "web.log"

    def few_files() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (160, 160))

    with log.open("w") as err:
        proc = subprocess.Popen(
            [*ARENA, "web", "--records", str(tmp_path), "--http", "0"],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            preexec_fn=few_files,
        )
    held: list[socket.socket] = []
    try:
        (line,) = list(lines_until(proc, "viewer on"))
        found = URL.search(line)
        assert found
        port = int(found.group(1).rsplit(":", 1)[1])
        # More connections than the process has files for, opened at once (a connection
        # that sends no request head is closed after 10 s: these come within it).
        held.extend(socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(200))
        answers: dict[socket.socket, bytes] = {}
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and len(answers) < 200 - (160 - WEB_FILES_KEPT):
            ready, _w, _x = select.select([c for c in held if c not in answers], [], [], 0.2)
            for conn in ready:
                answers[conn] = conn.recv(200)
        refused = [a for a in answers.values() if a.startswith(b"HTTP/1.1 503")]
        assert len(refused) >= 200 - (160 - WEB_FILES_KEPT), set(answers.values())
        for conn in held:
            conn.close()
        held.clear()
        assert b'data-match="stored"' in get(found.group(1) + "/")  # served again
    finally:
        for conn in held:
            conn.close()
        code = stop(proc)
    assert code == 0
    # A burst accepted at once can still meet the limit before the refused connections are
    # closed; the loop then pauses accepting for a second (it logged at every turn of it).
    assert log.read_text().count("out of system resource") <= 3


def test_web_with_a_server_takes_a_records_directory_that_does_not_exist_yet(
    tmp_path: Path,
) -> None:
    """The server creates its records directory with its first match: the viewer started
    before it waits for it instead of refusing to start."""
    records = tmp_path / "later"
    proc = subprocess.Popen(
        [*ARENA, "web", "--records", str(records), "--server", "127.0.0.1:9", "--http", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        (line,) = list(lines_until(proc, "viewer on"))
        assert f"(records in {records} (none yet), matches of 127.0.0.1:9)" in line
        found = URL.search(line)
        assert found
        base = found.group(1)
        assert b"No matches yet" in get(base + "/")
        write_match(records, "arrived")
        assert b'data-match="arrived"' in get(base + "/")
    finally:
        code = stop(proc)
    assert code == 0


def test_web_replays_one_record_file_and_nothing_beside_it(tmp_path: Path) -> None:
    """A record downloaded from a replay page (any name) opens with --records FILE."""
    source = write_match(tmp_path, "played")
    copy = tmp_path / "played (1).jsonl"
    copy.write_bytes(source.read_bytes())
    proc = subprocess.Popen(
        [*ARENA, "web", "--records", str(copy), "--http", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        first, second = list(lines_until(proc, "replay: "))
        assert f"(record {copy})" in first
        found = URL.search(first)
        assert found
        base = found.group(1)
        assert second.strip() == f"replay: {base}/replay/played--1-"
        listed = json.loads(get(base + "/api/matches"))
        assert [r["replay"] for r in listed] == ["/replay/played--1-"]
        replay = json.loads(get(base + "/api/records/played--1-/replay"))
        assert replay["complete"] and replay["match_id"] == "played"
        assert b'data-record="played--1-"' in get(base + "/replay/played--1-")
        with pytest.raises(urllib.error.HTTPError, match="404"):
            get(base + "/api/records/played/replay")  # its neighbour is not served
    finally:
        code = stop(proc)
    assert code == 0


def test_serve_http_runs_the_viewer_beside_the_grpc_server(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [*ARENA, "serve", "--port", "0", "--http", "0", "--records", str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        lines = list(lines_until(proc, "viewer on"))
        assert "listening on 127.0.0.1:" in lines[0]
        found = URL.search(lines[-1])
        assert found
        text = get(found.group(1) + "/metrics").decode()
        assert "medina_matches_running 0.0" in text and "medina_grpc_streams_open 0.0" in text
        assert b"No matches yet" in get(found.group(1) + "/")
    finally:
        code = stop(proc)
    assert code == 0


def test_match_http_prints_the_live_page_and_stays_for_the_replay(tmp_path: Path) -> None:
    bot = "python -m medina_client --bot random"
    proc = subprocess.Popen(
        [*ARENA, "match", "--ruleset", "medina-v2", "--players", "2", "--seed", "3",
         "--bot", bot, "--bot", bot, "--records", str(tmp_path), "--quiet",
         "--http", "0", "--stay"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        out = "".join(lines_until(proc, "the viewer stays up until Ctrl-C"))
        live = re.search(r"watch it live: (http://\S+)/live/(\w+)", out)
        assert live, out
        base, match_id = live.group(1), live.group(2)
        assert f"replay: {base}/replay/{match_id}" in out
        assert f"record: {tmp_path / match_id}.jsonl" in out
        replay = json.loads(get(f"{base}/api/records/{match_id}/replay"))
        assert replay["complete"] and replay["error"] is None
        assert b'data-state="finished"' in get(base + "/")
    finally:
        code = stop(proc, signal.SIGINT)
    assert code == 0


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["web", "--records", "no-such-dir"], "--records no-such-dir does not exist"),
        (["web", "--records", ".", "--http", "70000"], "--http must be a port from 0 to 65535"),
        (
            ["web", "--records", ".", "--max-streams-per-client", "-1"],
            "--max-streams-per-client -1: must be 0 (no limit) or more",
        ),
        (["serve", "--port", "0", "--http", "-1"], "--http must be a port from 0 to 65535"),
        # It said "no records directory ...jsonl (set --records DIR)" of a file.
        (
            ["web", "--records", "/nonexistent/game.jsonl"],
            "--records /nonexistent/game.jsonl does not exist (give a records directory or a "
            "record file)",
        ),
        # Refused before the server starts, not at its first CreateMatch.
        (["serve", "--records", "/proc/medina"], "--records /proc/medina: cannot write match"),
        (
            ["match", "--players", "2", "--bot", "b", "--bot", "b", "--records", "/proc/m"],
            "--records /proc/m: cannot write match records there",
        ),
        # A listener takes a larger port modulo 65536: --port 70000 listened on 4464.
        (["serve", "--port", "70000"], "--port must be a port from 0 to 65535 (0: any free), got"),
        (["ladder", "serve", "--arena-port", "-1"], "--arena-port must be a port from 0 to 65535"),
        (
            ["match", "--players", "2", "--bot", "b", "--bot", "b", "--server", "h:70000"],
            "--server h:70000: a port is 1 to 65535, got 70000",
        ),
        (["ladder", "serve", "--arena", "h:0"], "--arena h:0: a port is 1 to 65535, got 0"),
        (
            [
                "match",
                "--players",
                "2",
                "--bot",
                "b",
                "--bot",
                "b",
                "--server",
                "h:1",
                "--http",
                "0",
            ],
            "with --server, run the viewer there",
        ),
        (
            ["match", "--players", "2", "--bot", "b", "--bot", "b", "--linger-s", "-1"],
            "--linger-s must be 0 or more, got -1",
        ),
    ],
)
def test_bad_web_options_are_refused_in_one_line(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_busy_http_port_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["web", "--records", str(tmp_path), "--http", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"cannot listen for HTTP on 127.0.0.1:{port}" in err


def test_web_db_names_a_ladders_database_as_such(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It said only "no tournament in sqlite:///.../ladder.db".
    db = tmp_path / "ladder.db"
    store = LadderStore(str(db))
    made = accounts.new_key()
    store.add_bot("alpha", "alpha", made.key_id, made.salt, made.digest)
    store.engine.dispose()
    assert main(["web", "--records", str(tmp_path), "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"no tournament in sqlite:///{db}: it is a ladder's database "
                        f"(give it as --ladder-db {db})"), err  # fmt: skip
    assert len(err.splitlines()) == 1
