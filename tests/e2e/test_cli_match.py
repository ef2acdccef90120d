"""``medina-arena match`` with real bot processes, then ``replay verify`` on its record."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ARENA = [sys.executable, "-m", "medina.cli"]


def test_match_command_plays_bot_processes_and_the_record_verifies(tmp_path: Path) -> None:
    bot = "python -m medina_client --bot random"
    done = subprocess.run(
        [*ARENA, "match", "--ruleset", "medina-v1", "--players", "3", "--seed", "5",
         "--bot", bot, "--bot", bot, "--bot", bot, "--records", str(tmp_path), "--quiet"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "rank  seat  name" in done.stdout and "T1" in done.stdout
    record = Path(done.stdout.rsplit("record: ", 1)[1].strip())
    assert record.is_file()
    verify = subprocess.run(
        [*ARENA, "replay", "verify", str(record)], capture_output=True, text=True, timeout=60
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "OK" in verify.stdout

    lines = record.read_text().splitlines()
    n = next(i for i, line in enumerate(lines) if '"index":7,' in line)
    entry = json.loads(lines[n])
    entry["decision"]["action"] = {"kind": "ACTION_KIND_WALL", "square": 100}
    lines[n] = json.dumps(entry)
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(lines) + "\n")
    bad = subprocess.run(
        [*ARENA, "replay", "verify", str(edited)], capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 1
    assert f"line {n + 1}" in bad.stdout and "decision 7" in bad.stdout

    shown = subprocess.run(
        [*ARENA, "replay", "show", str(record), "--at", "10"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert shown.returncode == 0 and shown.stdout.startswith("step 10 of ")


def test_a_bot_that_dies_at_start_up_is_reported_and_forfeited_at_once(tmp_path: Path) -> None:
    # The connect deadline is 30 s: the match ends long before it, so the seat was
    # forfeited when its process exited, not at the deadline.
    done = subprocess.run(
        [*ARENA, "match", "--ruleset", "medina-v2", "--players", "2", "--seed", "3",
         "--bot", "python nonexistent_bot.py", "--bot", "python -m medina_client --bot random",
         "--records", str(tmp_path)],
        capture_output=True, text=True, timeout=25, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    first = done.stderr.splitlines()[0]
    assert first.startswith("seat 0's bot exited with code 2 before connecting; its log: ")
    assert "nonexistent_bot.py" in first  # the log's last line: the interpreter's complaint
    assert "crashed (its bot exited with code 2 before connecting)" in done.stdout
    # The referee plays the forfeited seat on: its moves are marked as on every page and in
    # `replay show` (the console wrote them as the bot's own).
    moves: dict[str, list[str]] = {"seat 0": [], "seat 1": []}
    for line in done.stdout.splitlines():
        if line.startswith("turn "):  # turn   1  seat 0: MOVE, MOVE     score   0   0
            who, played = line.rsplit(" score ", 1)[0].split(": ", 1)
            moves[who[-6:]] += played.strip().split(", ")
    assert moves["seat 0"] and moves["seat 1"]
    assert all(m.endswith(" (by the referee)") for m in moves["seat 0"]), moves["seat 0"]
    assert not [m for m in moves["seat 1"] if "referee" in m]


def test_a_match_whose_bots_all_die_is_abandoned(tmp_path: Path) -> None:
    done = subprocess.run(
        [*ARENA, "match", "--ruleset", "medina-v2", "--players", "2", "--seed", "3",
         "--bot", "python nonexistent_bot.py", "--bot", "python nonexistent_bot.py",
         "--records", str(tmp_path), "--quiet"],
        capture_output=True, text=True, timeout=25, cwd=tmp_path,
    )  # fmt: skip
    assert "(match abandoned: no seat's bot ever connected; nothing was played)" in done.stdout
    assert done.stderr.count("exited with code 2 before connecting") == 2


def test_a_bot_that_exits_mid_match_is_reported_and_forfeited_then(tmp_path: Path) -> None:
    tests = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), *sys.path])}
    done = subprocess.run(
        [*ARENA, "match", "--ruleset", "medina-v2", "--players", "2", "--seed", "3",
         "--bot", "python -m e2e.broken_bots.quits", "--bot", "python -m medina_client",
         "--records", str(tmp_path), "--quiet"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "seat 0's bot exited with code 3 during the match; its log: " in done.stderr
    assert "crashed (its bot exited with code 3 during the match)" in done.stdout


def test_a_stdio_bot_that_exits_mid_match_is_reported_with_its_programs_status(
    tmp_path: Path,
) -> None:
    tests = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), *sys.path])}
    bot = f"python -m medina_client stdio -- {sys.executable} -m e2e.broken_bots.stdio_crash"
    done = subprocess.run(
        [*ARENA, "match", "--ruleset", "medina-v2", "--players", "2", "--seed", "3",
         "--bot", bot, "--bot", "python -m medina_client", "--records", str(tmp_path), "--quiet"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = next(line for line in done.stderr.splitlines() if line.startswith("seat 0's bot"))
    assert said.startswith(
        "seat 0's bot's program exited with status 5 and its stdio bridge with code 3 during "
        "the match; its log: "
    )
    found = re.search(r"; its log ends: oops: cannot handle request \d+ \(in (.+)\)$", said)
    assert found is not None, said
    assert Path(found.group(1)).is_file()  # the file as kept beside the seat log
    assert "crashed (its bot's program exited with status 5 and its stdio bridge" in done.stdout


def test_a_bot_still_choosing_when_its_match_ends_reads_its_result(tmp_path: Path) -> None:
    # A bot blocking past its clock was forfeited; the match ended while it still chose,
    # and the server closed the stream before its (late) reply came: its gRPC library
    # failed the stream INTERNAL ("Internal error from Core") with MatchEnded unread, and
    # `play` raised SessionOver (MATCH_OVER) after reconnecting instead of the result.
    tests = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), *sys.path])}
    done = subprocess.run(
        [*ARENA, "match", "--ruleset", "medina-v2", "--players", "2", "--seed", "3",
         "--decision-ms", "300", "--bot", "python -m e2e.broken_bots.too_slow",
         "--bot", "python -m medina_client", "--records", str(tmp_path), "--quiet"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "timeout" in done.stdout
    (log,) = tmp_path.glob("*.seat0.log")
    said = log.read_text()
    assert "too_slow: result of 2 seats" in said, said
    assert "INTERNAL" not in said, said


@contextlib.contextmanager
def serve_elsewhere(tmp_path: Path, *extra: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``medina-arena serve`` as its own process (records in ``tmp_path/served``): the
    process and its address; stopped (killed if it will not) at the end."""
    server = subprocess.Popen(
        [*ARENA, "serve", "--port", "0", "--records", str(tmp_path / "served"), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=tmp_path,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert "listening on" in line, line
        yield server, line.split()[-1]
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=30)


def test_with_a_server_elsewhere_a_bot_that_exits_is_forfeited_at_once(tmp_path: Path) -> None:
    # `match --server`: the server is another process. A reconnect grace and clocks far
    # longer than the bounded waits, and a 30 s connect deadline beyond them: only the
    # forfeit sent when a bot's process exits (ForfeitSeat) ends these matches in time.
    tests = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), *sys.path])}
    with serve_elsewhere(tmp_path, "--organiser-token", "s3cret") as (_server, address):
        slow = ["--reconnect-grace-ms", "3600000", "--decision-ms", "600000", "--bank-ms", "0"]
        for bot, timeout, said in (
            ("python -m e2e.broken_bots.quits", 60, "exited with code 3 during the match"),
            ("python nonexistent_bot.py", 25, "exited with code 2 before connecting"),
        ):
            done = subprocess.run(
                [*ARENA, "match", "--ruleset", "medina-v2", "--players", "2", "--seed", "3",
                 "--bot", bot, "--bot", "python -m medina_client --bot random",
                 "--server", address, "--organiser-token", "s3cret", *slow,
                 "--records", str(tmp_path / "logs"), "--quiet"],
                capture_output=True, text=True, timeout=timeout, cwd=tmp_path, env=env,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            assert f"seat 0's bot {said}; its log: " in done.stderr
            assert f"crashed (its bot {said})" in done.stdout


@contextlib.contextmanager
def matched_elsewhere(
    tmp_path: Path,
) -> Iterator[tuple[subprocess.Popen[str], str, subprocess.Popen[str]]]:
    """A server elsewhere, and ``match --server`` on it, its match in play (both bots
    connected: it waits for the silent one); the server, its address and the match."""
    tests = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), *sys.path])}
    served = tmp_path / "served"
    with serve_elsewhere(tmp_path) as (server, address):
        match = subprocess.Popen(
            [*ARENA, "match", "--ruleset", "medina-v2", "--players", "2", "--seed", "1",
             "--decision-ms", "600000", "--server", address,
             "--bot", "python -m medina_client --bot greedy",
             "--bot", "python -m e2e.broken_bots.silent",  # never answers: the match waits
             "--records", str(tmp_path / "logs"), "--quiet"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 30
            while sum(r.read_text().count("KIND_CONNECTED") for r in served.glob("*.jsonl")) < 2:
                assert time.monotonic() < deadline and match.poll() is None
                with contextlib.suppress(subprocess.TimeoutExpired):
                    match.wait(0.05)  # polling a file another process writes
            yield server, address, match
        finally:
            match.kill()


def test_a_server_elsewhere_killed_mid_match_is_said_in_one_line(tmp_path: Path) -> None:
    # `match --server` printed gRPC's traceback (UNAVAILABLE: Stream removed) when its
    # server died, then gave its bots 10 s each to exit.
    with matched_elsewhere(tmp_path) as (server, address, match):
        server.kill()
        out, err = match.communicate(timeout=30)
    assert match.returncode == 2, out + err
    assert "Traceback" not in err
    (said,) = err.splitlines()
    assert re.fullmatch(
        rf"medina-arena match: match \w+: the server at {re.escape(address)} went away "
        r"\(UNAVAILABLE: .+\)",
        said,
    ), said
    # Its bots were stopped: none is left playing for the server that is gone.
    assert not [
        pid
        for pid in os.listdir("/proc")
        if pid.isdigit() and _reads(Path("/proc", pid, "cmdline")).count(address.encode())
    ]


def test_a_server_elsewhere_shut_down_mid_match_ends_it_with_its_result(tmp_path: Path) -> None:
    # The shutdown aborted the match and `match` printed the result, then, asking where
    # the record was, said "the server ... went away" and exited 2, as for a killed server.
    with matched_elsewhere(tmp_path) as (server, _address, match):
        server.terminate()  # SIGTERM: the server aborts its matches and stops
        out, err = match.communicate(timeout=60)
    assert match.returncode == 1, out + err  # an aborted match, not a lost server
    assert "went away" not in err and "Traceback" not in err, err
    assert "aborted" in out and "record: " in out, out


def _reads(path: Path) -> bytes:
    """A file's bytes; none when it is gone (a process that ended meanwhile)."""
    try:
        return path.read_bytes()
    except OSError:
        return b""


def test_the_progress_lines_show_the_start_seats_first_turn(tmp_path: Path) -> None:
    # medina-v2's first turn (one placement) starts at setup: its TurnStarted is in the
    # spectator's snapshot, not in an update.
    bot = "python -m medina_client --bot random"
    done = subprocess.run(
        [*ARENA, "match", "--ruleset", "medina-v2", "--players", "2", "--seed", "3",
         "--start-seat", "1", "--bot", bot, "--bot", bot, "--records", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    turns = [line for line in done.stdout.splitlines() if line.startswith("turn ")]
    assert re.match(r"turn +1  seat 1: [^,]+ score", turns[0]), turns[0]
    assert turns[1].startswith("turn   2  seat 0: ") and ", " in turns[1]


def test_the_match_seed_seeds_the_bundled_bots_in_a_first_edition(tmp_path: Path) -> None:
    # `SEED=N make run`: medina-v1 has no random setup; the bots, started without --seed,
    # seed themselves from the match (its seed and their seat).
    def game(seed: int) -> list[str]:
        bot = "python -m medina_client --bot random"
        done = subprocess.run(
            [*ARENA, "match", "--ruleset", "medina-v1", "--players", "3", "--seed", str(seed),
             "--bot", bot, "--bot", bot, "--bot", bot, "--records", str(tmp_path), "--quiet"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        record = Path(done.stdout.rsplit("record: ", 1)[1].strip()).read_text().splitlines()
        return [
            json.dumps(json.loads(line)["decision"]["action"])
            for line in record
            if '"decision"' in line
        ]

    one, two, one_again = game(1), game(2), game(1)
    assert one == one_again
    assert one != two


def test_an_open_seat_prints_its_token_and_waits_for_a_bot_connected_by_hand(
    tmp_path: Path,
) -> None:
    match = subprocess.Popen(
        [*ARENA, "match", "--players", "2", "--seed", "4", "--bot", "-",
         "--bot", "python -m medina_client --bot random", "--connect-timeout-ms", "60000",
         "--records", str(tmp_path), "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert match.stdout is not None
        line = match.stdout.readline()
        found = re.fullmatch(
            r"seat 0 is open: connect a bot to (\S+) with the seat token (\S+) "
            r"\(e\.g\. MEDINA_SERVER=\1 MEDINA_TOKEN=\2 \./my-bot\)\n",
            line,
        )
        assert found, line
        address, token = found.groups()
        bot = subprocess.run(
            [sys.executable, "-m", "medina_client", "--server", address, "--bot", "greedy",
             "--quiet"],
            env={**os.environ, "MEDINA_TOKEN": token}, capture_output=True, text=True,
            timeout=90,
        )  # fmt: skip
        assert bot.returncode == 0, bot.stderr
        out, err = match.communicate(timeout=60)
    finally:
        match.kill()
    assert match.returncode == 0, err
    board = out.split("rank  seat  name", 1)[1]
    seat0 = next(line for line in board.splitlines() if re.match(r"\s+\d+\s+0\s", line))
    assert "greedy" in seat0 and "normal" in seat0  # the hand-connected bot played it


def test_open_seats_and_the_connect_timeout_are_checked(tmp_path: Path) -> None:
    bad = subprocess.run(
        [*ARENA, "match", "--players", "2", "--bot", "-", "--bot", "-",
         "--connect-timeout-ms", "-1", "--records", str(tmp_path)],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert bad.returncode == 2
    assert "--connect-timeout-ms: connect_timeout_ms must be 0.." in bad.stderr
    boxed = subprocess.run(
        [*ARENA, "match", "--players", "2", "--bot", "-", "--bot", "-", "--sandbox",
         "--records", str(tmp_path)],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert boxed.returncode == 2
    assert "an open seat ('-') has none" in boxed.stderr


def test_ctrl_c_aborts_the_match_before_its_bots_are_stopped(tmp_path: Path) -> None:
    # Interrupted, `match` stopped its bots first: the match played on without them and its
    # record read as a finished game the started bots had lost by crashing (15 s later).
    proc = subprocess.Popen(
        [*ARENA, "match", "--ruleset", "medina-v2", "--players", "2", "--seed", "1",
         "--decision-ms", "60000",
         "--bot", "python -m medina_client --bot greedy",
         "--bot", "python -m medina_client stdio -- sh -c 'cat >/dev/null'",  # never answers
         "--records", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a terminal's
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # its first line, once the bots are started
            if line.startswith("match "):
                break
        (record,) = tmp_path.glob("*.jsonl")
        deadline = time.monotonic() + 30
        # Both bots connected: the match is in play (it waits for the silent one).
        while record.read_text().count("INCIDENT_KIND_CONNECTED") < 2:
            assert time.monotonic() < deadline and proc.poll() is None
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(0.05)  # polling a file another process writes
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130
    finally:
        proc.kill()
    listed = subprocess.run(
        [*ARENA, "replay", "list", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    (row,) = listed.stdout.splitlines()[:-1]  # the record's line, then the count
    assert row.split()[1] == "aborted"
    assert "aborted: interrupted: the match command was stopped (Ctrl-C)" in row
