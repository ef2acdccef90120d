"""The stdio bridge: its line codec, and a scripted bot program against the scripted fake
arena (refusals, unreadable and extra lines, a bot that exits, closes its stdout or hangs,
reconnects, refused handshakes, usage errors)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format
from medina.engine import apply_action, is_legal, legal_actions, new_game
from medina.v1 import arena_pb2, common_pb2, game_pb2, match_pb2
from medina.wire.convert import action_from_proto
from medina.wire.shared.bridge_log import KEPT_PREFIX_ENV, parse_failure
from medina_client.__main__ import main as cli_main
from medina_client.stdio import (
    EXIT_ARENA,
    EXIT_BOT,
    EXIT_ENDED,
    BridgeConfig,
    StdioBridge,
    default_name,
    log_file_name,
    unended_hint,
)
from medina_client.stdio import main as stdio_main
from medina_client.stdio_lines import LineError, decode_action, decode_answer, encode_line
from medina_client.stdio_process import BotProcess

from .fake_arena import FakeStream, Script, ended, fake_server, request, run, welcome

BOT = Path(__file__).with_name("stdio_bot.py")
RANDOM_JS = Path(__file__).resolve().parents[2] / "clients" / "stdio" / "random_bot.js"
pytestmark = pytest.mark.timeout(60)


# -- the line codec ---------------------------------------------------------------------------


def test_a_server_message_is_one_line_of_its_json_mapping() -> None:
    s = new_game("medina-v2", 2, 3)
    message = request(s, 7)
    line = encode_line(message)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    data = json.loads(line)
    assert data["request"]["requestId"] == 7  # a plain number (uint32)
    seats = data["request"]["observation"]["seats"]
    assert [v["seat"] for v in seats] == list(range(len(seats)))  # seat 0 is written out
    assert data["request"]["legal"]["placements"][0]["kind"].startswith("ACTION_KIND_")
    assert json_format.Parse(line, arena_pb2.PlayResponse()) == message


def test_every_object_of_a_line_has_its_fields_in_the_proto_order() -> None:
    # The protobuf library writes fields at their default last: a rooftop's colour (none)
    # came after its squares, and a bot matching the documented order with a pattern broke.
    legal = game_pb2.LegalActions(
        placements=[
            game_pb2.LegalPlacements(kind=game_pb2.ACTION_KIND_ROOFTOP, squares=[17, 18]),
            game_pb2.LegalPlacements(
                kind=game_pb2.ACTION_KIND_BUILDING, colour=common_pb2.PALACE_COLOUR_GREY
            ),
        ],
        tea=True,
    )
    message = arena_pb2.PlayResponse(request=arena_pb2.DecisionRequest(request_id=3, legal=legal))
    line = encode_line(message).decode()
    assert line == (
        '{"request":{"requestId":3,"legal":{"placements":['
        '{"kind":"ACTION_KIND_ROOFTOP","colour":"PALACE_COLOUR_UNSPECIFIED","squares":[17,18]},'
        '{"kind":"ACTION_KIND_BUILDING","colour":"PALACE_COLOUR_GREY","squares":[]}'
        '],"tea":true}}}\n'
    )
    s = new_game("medina-v2", 2, 3)
    welcomed = json.loads(encode_line(welcome(s, 0)))["welcome"]
    fields = arena_pb2.Welcome.DESCRIPTOR.fields
    assert list(welcomed) == [f.json_name for f in fields if f.json_name in welcomed]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            '{"kind":"ACTION_KIND_WALL","square":17}',
            game_pb2.Action(kind=game_pb2.ACTION_KIND_WALL, square=17),
        ),
        (
            b'  {"kind":1,"square":"40","colour":"PALACE_COLOUR_BROWN"}\r\n',
            game_pb2.Action(
                kind=game_pb2.ACTION_KIND_BUILDING, square=40, colour=common_pb2.PALACE_COLOUR_BROWN
            ),
        ),
        ('{"kind":"ACTION_KIND_TEA"}', game_pb2.Action(kind=game_pb2.ACTION_KIND_TEA)),
        ("{}", game_pb2.Action()),  # well-formed; the server refuses it as malformed
    ],
)
def test_answer_lines_are_actions_in_the_json_mapping(
    line: str | bytes, expected: game_pb2.Action
) -> None:
    assert decode_action(line) == expected


@pytest.mark.parametrize(
    ("line", "rid", "ignored"),
    [
        ('{"kind":"ACTION_KIND_TEA"}', None, []),
        ('{"requestId":3,"action":{"kind":"ACTION_KIND_TEA"}}', 3, []),
        ('{"requestId":"3","action":{"kind":"ACTION_KIND_TEA"}}', 3, []),  # uint32 as a string
        ('{"requestId":3,"kind":"ACTION_KIND_TEA"}', 3, []),  # flat: the id beside the action
        ('{"kind":"ACTION_KIND_TEA","why":"tea time"}', None, ["why"]),
        ('{"requestId":3,"action":{"kind":9,"x":1},"eval":0.5}', 3, ["eval", "action.x"]),
    ],
)
def test_an_answer_may_name_its_request_and_unknown_fields_are_ignored(
    line: str, rid: int | None, ignored: list[str]
) -> None:
    answer = decode_answer(line)
    assert answer.action == game_pb2.Action(kind=game_pb2.ACTION_KIND_TEA)
    assert answer.request_id == rid
    assert answer.ignored == ignored


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("hello", "not JSON (Expecting value at column 1): 'hello'"),
        ("[1, 2]", "a JSON list, not an object"),
        ("17", "a JSON number, not an object"),
        ('{"requestId":0,"action":{}}', "requestId must be a request's id"),
        ('{"requestId":"three","action":{}}', "requestId must be a request's id"),
        ('{"requestId":3,"action":[7]}', "'action' must be an object"),
        ('{"kind":"WALL","square":3}', "Invalid enum value WALL"),
        ('{"kind":7,"square":"F6"}', "Failed to parse square field"),
        ('{"kind":7} {"kind":7}', "not JSON (Extra data at column 12)"),
        (b'{"kind":"\xff"}', "not UTF-8 text (invalid start byte at byte 9)"),
        ("x" * 200, "... (200 characters)"),
    ],
)
def test_a_bad_answer_line_says_what_is_wrong(line: str | bytes, message: str) -> None:
    with pytest.raises(LineError) as info:
        decode_action(line)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (["node", "clients/stdio/random_bot.js", "--seed", "3"], "random_bot"),
        (["/usr/bin/python3.11", "-m", "mybot"], "mybot"),
        (["java", "-jar", "bots/medina.jar"], "medina"),
        (["./target/release/medina-bot", "--depth", "3"], "medina-bot"),
        (["tclsh8.6", "bots/tiny.tcl"], "tiny"),
        (["wish", "bots/board.tcl"], "board"),
    ],
)
def test_the_default_name_is_the_program_or_its_script(command: list[str], name: str) -> None:
    assert default_name(command) == name


def test_log_file_names_are_safe() -> None:
    assert log_file_name("my bot/2", 41) == "bot-my_bot_2-41.log"
    assert log_file_name("..", 7) == "bot-bot-7.log"


def test_the_readme_says_the_log_goes_where_medina_log_dir_says() -> None:
    # it once said "in the current directory", which is where it goes only when started by
    # hand: under match, check-bot and tournaments the arena sets MEDINA_LOG_DIR
    readme = " ".join((RANDOM_JS.parent / "README.md").read_text().split())
    assert "`$MEDINA_LOG_DIR`, else the current directory" in readme
    assert "records directory" in readme


# -- the bridge against the fake arena -----------------------------------------------------------


def rejected(request_id: int) -> arena_pb2.PlayResponse:
    return arena_pb2.PlayResponse(
        rejected=arena_pb2.Rejected(
            request_id=request_id,
            code=common_pb2.ERROR_CODE_ILLEGAL_ACTION,
            rule="palace-separation",
            message="building at F7 touches the brown palace at G8",
            rejections_left=2,
        )
    )


def bridge_args(address: str, tmp: Path, behaviour: str, *options: str) -> list[str]:
    """Bridge arguments running the scripted bot; its transcript is tmp/seen.jsonl."""
    if "--log-dir" not in options:
        options = ("--log", str(tmp / "bot.log"), *options)
    return [
        *("--server", address, "--token", "T", "--name", "b1", "--exit-wait", "0.5", *options),
        *("--", sys.executable, str(BOT), behaviour, str(tmp / "seen.jsonl")),
    ]


def bridge(scripts: list[Script], tmp: Path, behaviour: str, *options: str) -> tuple[int, int]:
    """Run the bridge CLI against the scripts; (exit status, Play streams opened)."""

    async def go() -> tuple[int, int]:
        async with fake_server(scripts) as (arena, address):
            argv = ["stdio", *bridge_args(address, tmp, behaviour, *options)]
            code = await asyncio.to_thread(cli_main, argv)
        return code, arena.streams

    return run(go())


def seen(tmp: Path) -> list[arena_pb2.PlayResponse]:
    """The lines the scripted bot read, parsed."""
    lines = (tmp / "seen.jsonl").read_text().splitlines()
    return [json_format.Parse(line, arena_pb2.PlayResponse()) for line in lines]


def kinds(messages: list[arena_pb2.PlayResponse]) -> list[str | None]:
    return [m.WhichOneof("message") for m in messages]


def test_a_match_with_a_refusal_and_a_retry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    s = new_game("medina-v2", 2, 3)
    update = arena_pb2.PlayResponse(
        update=game_pb2.Update(events=[game_pb2.Event(index=9, passed=game_pb2.Passed(seat=1))])
    )
    notice = arena_pb2.PlayResponse(
        notice=arena_pb2.Notice(code=common_pb2.ERROR_CODE_STALE_REQUEST, request_id=7, message="x")
    )

    async def script(stream: FakeStream) -> None:
        hello = await stream.hello()
        assert (hello.token, hello.bot_name, hello.protocol_version) == ("T", "b1", 1)
        assert hello.omit_updates  # requests carry the events: no update lines by default
        assert list(hello.features) == ["redirect"]  # the bridge's own; none for the program
        stream.send(welcome(s, 0))
        stream.send(request(s, 7))
        first = await stream.reply()
        assert first.request_id == 7
        assert is_legal(s, action_from_proto(first.action, s.rules.geometry))
        stream.send(rejected(7))
        second = await stream.reply()
        assert second.request_id == 7 and second.action != first.action
        assert is_legal(s, action_from_proto(second.action, s.rules.geometry))
        stream.send(update)
        stream.send(notice)
        stream.send(ended(2))

    monkeypatch.setenv("MEDINA_TOKEN", "secret")
    assert bridge([script], tmp_path, "first", "--log-dir", str(tmp_path / "logs")) == (0, 1)
    assert capsys.readouterr().out == "match over: seat 0 bot0: 10 (rank 1)\n"
    got = seen(tmp_path)
    assert kinds(got) == ["welcome", "request", "rejected", "update", "notice", "ended"]
    assert got[0] == welcome(s, 0) and got[1] == request(s, 7) and got[3] == update
    log = (tmp_path / "logs" / f"bot-b1-{os.getpid()}.log").read_text()
    assert "stdio_bot: started pid" in log and "stdio_bot: stdin closed" in log
    assert "token None" in log  # the seat token stays with the bridge
    assert "[bridge] request 7: the server refused the bot's action (palace-separation)" in log
    assert "[bridge] the bot exited with status 0" in log


def test_an_unreadable_line_is_reported_and_the_request_stays_open(tmp_path: Path) -> None:
    s = new_game("medina-v2", 2, 4)
    after = apply_action(s, legal_actions(s)[0])

    async def script(stream: FakeStream) -> None:
        await stream.hello()
        stream.send(welcome(s, s.to_move))
        stream.send(request(s, 1))
        # Nothing comes for request 1; as the server would after its timeout, ask the next.
        stream.send(request(after, 2, since=s.n_events))
        reply = await stream.reply()
        assert reply.request_id == 2
        assert is_legal(after, action_from_proto(reply.action, after.rules.geometry))
        stream.send(ended(2))

    assert bridge([script], tmp_path, "garbage") == (0, 1)
    log = (tmp_path / "bot.log").read_text()
    assert (
        "line 3 from the bot is not JSON (Expecting value at column 1): 'this is not json'; "
        "nothing was sent for request 1: it stays open until the server's timeout policy "
        "decides it"
    ) in log
    # the fix, as for a line that answers nothing: a debug print belongs on stderr
    fix = "write one line per request or rejected line, and anything else to stderr"
    assert f"decides it; {fix}" in log
    notices = [m.notice for m in seen(tmp_path) if m.HasField("notice")]
    assert len(notices) == 1
    assert notices[0].request_id == 1 and notices[0].code == common_pb2.ERROR_CODE_PROTOCOL
    assert notices[0].message.startswith("stdio bridge: line 3 from the bot is not JSON")


def test_a_line_beyond_the_answers_owed_is_reported_and_ignored(tmp_path: Path) -> None:
    s = new_game("medina-v2", 2, 5)

    async def script(stream: FakeStream) -> None:
        await stream.hello()
        stream.send(welcome(s, s.to_move))
        stream.send(request(s, 1))
        assert (await stream.reply()).request_id == 1
        stream.send(ended(2))

    assert bridge([script], tmp_path, "twice") == (0, 1)
    log = (tmp_path / "bot.log").read_text()
    assert "line 2 from the bot answers nothing (write one line per request or" in log


def test_updates_and_features_are_asked_for_when_the_program_wants_them(tmp_path: Path) -> None:
    s = new_game("medina-v2", 2, 8)

    async def script(stream: FakeStream) -> None:
        hello = await stream.hello()
        assert not hello.omit_updates
        assert list(hello.features) == ["forfeit-notices", "redirect"]
        stream.send(welcome(s, s.to_move))
        stream.send(request(s, 1))
        assert (await stream.reply()).request_id == 1
        stream.send(ended(2))

    options = ("--updates", "--feature", "forfeit-notices")
    assert bridge([script], tmp_path, "first", *options) == (0, 1)


def test_an_answer_naming_its_request_skips_the_lines_owed_before_it(tmp_path: Path) -> None:
    s = new_game("medina-v2", 2, 5)
    after = apply_action(s, legal_actions(s)[0])

    async def script(stream: FakeStream) -> None:
        await stream.hello()
        stream.send(welcome(s, s.to_move))
        stream.send(request(s, 1))
        # The program skips request 1; the next request comes, as after a timeout.
        stream.send(request(after, 2, since=s.n_events))
        reply = await stream.reply()
        assert reply.request_id == 2  # not paired with the older line still owed
        assert is_legal(after, action_from_proto(reply.action, after.rules.geometry))
        stream.send(request(after, 3))  # the same position asked again: paired by id too
        assert (await stream.reply()).request_id == 3
        stream.send(ended(2))

    assert bridge([script], tmp_path, "named") == (0, 1)
    log = (tmp_path / "bot.log").read_text()
    assert "line 1 from the bot answers request 2; the line(s) owed before it (requests 1)" in log
    assert "ignored the field(s) this bridge does not know: eval" in log


def early_end(stream_closed: list[bool]) -> Script:
    """Welcome and one request, then expect the bot's side to close without a reply."""

    async def script(stream: FakeStream) -> None:
        s = new_game("medina-v2", 2, 6)
        await stream.hello()
        stream.send(welcome(s, s.to_move))
        stream.send(request(s, 1))
        stream_closed.append(await stream.inbox.get() is None)

    return script


def test_a_bot_that_exits_early_fails_the_bridge_and_closes_the_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    closed: list[bool] = []
    # A long --exit-wait costs nothing here: the bot has exited when the bridge waits for it.
    assert bridge([early_end(closed)], tmp_path, "exit", "--exit-wait", "20") == (EXIT_BOT, 1)
    assert closed == [True]
    err = capsys.readouterr().err
    assert err == (
        "medina_client stdio: the bot exited with status 4 before the match ended; "
        f"its stderr ends: stdio_bot: bye; its stderr is in {tmp_path / 'bot.log'}\n"
    )
    assert "stdio_bot: bye" in (tmp_path / "bot.log").read_text()


def test_a_failing_bot_under_the_arena_names_its_log_where_the_arena_keeps_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # match, check-bot and tournaments move MEDINA_LOG_DIR's files beside the seat log once the
    # bot exited: the path in the bridge's last line must be that one, not the gone one.
    logs = tmp_path / "seat0.logs"
    monkeypatch.setenv("MEDINA_LOG_DIR", str(logs))
    monkeypatch.setenv(KEPT_PREFIX_ENV, f"{tmp_path / 'seat0'}.")
    closed: list[bool] = []
    assert bridge([early_end(closed)], tmp_path, "exit", "--log-dir", str(logs)) == (EXIT_BOT, 1)
    failure = parse_failure(capsys.readouterr().err.strip())
    assert failure is not None
    assert (failure.status, failure.tail) == ("status 4", "stdio_bot: bye")
    assert failure.path == f"{tmp_path / 'seat0'}.bot-b1-{os.getpid()}.log"


def test_a_script_with_windows_line_endings_is_named_as_such(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "winbot.sh"
    script.write_bytes(b"#!/bin/sh\r\necho hello\r\n")
    script.chmod(0o755)

    async def wait(stream: FakeStream) -> None:
        await stream.inbox.get()  # the hello, if the bridge got that far

    async def go() -> int:
        async with fake_server([wait]) as (_arena, address):
            argv = ["--server", address, "--token", "T", "--log", str(tmp_path / "bot.log")]
            return await asyncio.to_thread(stdio_main, [*argv, "--", str(script)])

    assert run(go()) == EXIT_BOT
    err = capsys.readouterr().err
    assert "could not be started" in err or "cannot start the bot" in err
    assert f"{script} has Windows line endings (CRLF)" in err
    for line in (tmp_path / "bot.log").read_text().splitlines():  # each line whole
        assert "[bridge]" not in line or line.index("[bridge]") == 24, line


def test_a_bot_that_closes_its_stdout_is_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    closed: list[bool] = []
    assert bridge([early_end(closed)], tmp_path, "close") == (EXIT_BOT, 1)
    assert closed == [True]
    err = capsys.readouterr().err
    assert "the bot closed its stdout before the match ended (it is still running" in err


def test_a_hanging_bot_is_left_to_the_server_then_terminated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = new_game("medina-v2", 2, 7)

    async def script(stream: FakeStream) -> None:
        await stream.hello()
        stream.send(welcome(s, s.to_move))
        stream.send(request(s, 1))
        stream.send(request(s, 2, time_left_ms=0))  # the server timed request 1 out
        stream.send(ended(2))
        assert await stream.inbox.get() is None  # no reply ever came

    assert bridge([script], tmp_path, "hang") == (EXIT_BOT, 1)
    out, err = capsys.readouterr()
    assert out.startswith("match over: ")
    assert err.endswith(
        "medina_client stdio: the bot did not exit within 0.5 s after the match ended; "
        f"terminated it (its stderr is in {tmp_path / 'bot.log'})\n"
    )
    assert "request 1: the bot did not answer before the server moved on" in err
    assert "no answer line reached the bridge. The usual cause is output buffering" in err
    log = (tmp_path / "bot.log").read_text()
    assert "the match ended while the bot still owed 2 answer(s) (requests 1, 2)" in log


def test_an_answer_owed_when_the_server_aborts_the_match_is_not_blamed_on_the_bot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # After "match over: ... ABORTED (the ladder server stopped)" the bridge said the bot
    # still owed an answer and that the usual cause is output buffering.
    s = new_game("medina-v2", 2, 7)

    async def script(stream: FakeStream) -> None:
        await stream.hello()
        stream.send(welcome(s, s.to_move))
        stream.send(request(s, 1))
        end = ended(2)
        end.ended.result.ending = match_pb2.MATCH_ENDING_ABORTED
        for seat in end.ended.result.seats:
            seat.termination = match_pb2.TERMINATION_ABORTED
            seat.detail = "the ladder server stopped"
        stream.send(end)
        assert await stream.inbox.get() is None

    bridge([script], tmp_path, "hang")
    _out, err = capsys.readouterr()
    log = (tmp_path / "bot.log").read_text()
    assert (
        "the match was aborted (the ladder server stopped) while the bot was answering 1 "
        "request(s) (1): not the bot's doing"
    ) in log
    assert "still owed" not in log + err and "buffering" not in log + err


def overdue(tmp: Path, behaviour: str) -> str:
    """The bridge's log after a match where request 2 is not answered before request 3."""
    s = new_game("medina-v2", 2, 7)

    async def script(stream: FakeStream) -> None:
        await stream.hello()
        stream.send(welcome(s, s.to_move))
        stream.send(request(s, 1))
        if behaviour == "late":  # line 1 has reached the bridge: it sent it
            assert (await stream.reply()).request_id == 1
        stream.send(request(s, 2))
        stream.send(request(s, 3, time_left_ms=0))  # the server timed request 2 out
        stream.send(ended(2))

    bridge([script], tmp, behaviour)
    return (tmp / "bot.log").read_text()


def test_a_late_answer_after_answers_that_came_is_not_blamed_on_buffering(tmp_path: Path) -> None:
    log = overdue(tmp_path, "late")
    assert "request 2: the bot did not answer before the server moved on" in log
    assert "its earlier lines reached the bridge, so its output is not stuck in a buffer" in log
    assert "output buffering" not in log


def test_an_answer_without_its_newline_is_named(tmp_path: Path) -> None:
    # The program wrote its answer but not the newline that ends it: the bridge, which reads
    # whole lines, says so rather than blaming an output buffer.
    program = "import sys; sys.stdout.write('{\"kind\":1'); sys.stdout.flush(); sys.stdin.read()"
    config = BridgeConfig(
        "127.0.0.1:1", "T", (sys.executable, "-c", program), tmp_path / "b.log", "b"
    )
    bridge = StdioBridge(config)

    async def go() -> str:
        bot = await BotProcess.start(config.command, config.log_path)
        reading = asyncio.ensure_future(bot.readline())
        async with asyncio.timeout(20):
            while not bot.partial:  # until the bridge holds the unended line
                await asyncio.sleep(0.01)
        said = bridge._late_hint(bot)
        await bot.stop(5)
        assert await reading == b'{"kind":1'  # returned as it is at the end of the output
        return said

    assert asyncio.run(go()) == unended_hint(9)
    assert 'without ending the line: end every answer line with "\\n"' in unended_hint(9)


def test_the_bot_program_lives_through_a_reconnect(tmp_path: Path) -> None:
    s = new_game("medina-v2", 2, 5)

    async def first(stream: FakeStream) -> None:
        assert (await stream.hello()).resume_token == ""
        stream.send(welcome(s, 0, resume_token="r1"))
        stream.send(request(s, 1))
        assert (await stream.reply()).request_id == 1
        stream.abort(grpc.StatusCode.UNAVAILABLE, "server going away")

    async def second(stream: FakeStream) -> None:
        assert (await stream.hello()).resume_token == "r1"
        stream.send(welcome(s, 0, resume_token="r1"))
        stream.send(request(s, 2))
        assert (await stream.reply()).request_id == 2
        stream.send(ended(2))

    assert bridge([first, second], tmp_path, "first") == (0, 2)
    assert kinds(seen(tmp_path)) == ["welcome", "request", "welcome", "request", "ended"]
    log = (tmp_path / "bot.log").read_text()
    assert log.count("stdio_bot: started pid") == 1
    assert "reconnecting in" in log


def test_a_refused_handshake_exits_1_and_stops_the_bot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def refuse(stream: FakeStream) -> None:
        await stream.hello()
        stream.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown seat token")

    assert bridge([refuse], tmp_path, "first", "--exit-wait", "20") == (EXIT_ARENA, 1)
    err = capsys.readouterr().err
    assert err == "medina_client stdio: handshake refused (UNAUTHENTICATED): unknown seat token\n"
    assert "stdio_bot: stdin closed" in (tmp_path / "bot.log").read_text()


def test_a_program_that_cannot_start_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--server", "127.0.0.1:1", "--token", "T", "--log-dir", str(tmp_path)]
    assert stdio_main([*argv, "--", str(tmp_path / "no-such-bot")]) == EXIT_BOT
    err = capsys.readouterr().err
    assert err == (
        f"medina_client stdio: cannot start the bot '{tmp_path / 'no-such-bot'}': "
        "No such file or directory\n"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--server", "h:1", "--token", "T", "node", "bot.js"], "put the bot command after --"),
        (["--server", "h:1", "--token", "T", "--"], "no bot command after --"),
        (["--server", "h:1", "--token", "T", "--exit-wait", "0", "--", "x"], "--exit-wait"),
        (["--log", "a", "--log-dir", "b", "--", "x"], "not allowed with argument"),
        (["--server", "h:70000", "--token", "T", "--", "x"], "a port is 1 to 65535, got 70000"),
    ],
)
def test_usage_errors_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        cli_main(["stdio", *argv])
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_server_and_token_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("MEDINA_SERVER", raising=False)
    monkeypatch.delenv("MEDINA_TOKEN", raising=False)
    with pytest.raises(SystemExit):
        stdio_main(["--", "x"])

    async def one(stream: FakeStream) -> None:
        s = new_game("medina-v2", 2, 8)
        assert (await stream.hello()).token == "env-token"
        stream.send(welcome(s, 1))
        stream.send(ended(2))

    async def go() -> int:
        async with fake_server([one]) as (_, address):
            monkeypatch.setenv("MEDINA_SERVER", address)
            monkeypatch.setenv("MEDINA_TOKEN", "env-token")
            argv = ["--quiet", "--log", str(tmp_path / "b.log")]
            argv += ["--", sys.executable, str(BOT), "first", str(tmp_path / "seen.jsonl")]
            return await asyncio.to_thread(stdio_main, argv)

    assert run(go()) == EXIT_ENDED
    assert kinds(seen(tmp_path)) == ["welcome", "ended"]


def test_a_token_starting_with_a_dash_is_a_token_in_both_commands(tmp_path: Path) -> None:
    # Seat tokens are URL-safe base64: one in 64 starts with "-".
    def script(expected: str) -> Script:
        async def one(stream: FakeStream) -> None:
            s = new_game("medina-v2", 2, 8)
            assert (await stream.hello()).token == expected
            stream.send(welcome(s, 0))
            stream.send(ended(2))

        return one

    async def go() -> tuple[int, int]:
        async with fake_server([script("-stdio"), script("-sdk")]) as (_, address):
            argv = ["stdio", "--server", address, "--token", "-stdio"]
            argv += ["--log", str(tmp_path / "b.log"), "--", sys.executable, str(BOT), "first"]
            argv += [str(tmp_path / "seen.jsonl"), "--name", "-x"]
            stdio = await asyncio.to_thread(cli_main, argv)
            sdk = ["--server", address, "--token", "-sdk", "--name", "-n", "--quiet"]
            return stdio, await asyncio.to_thread(cli_main, sdk)

    assert run(go()) == (EXIT_ENDED, 0)
    assert kinds(seen(tmp_path)) == ["welcome", "ended"]
    assert "extra arguments ['--name', '-x']" in (tmp_path / "b.log").read_text()


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_the_node_example_retries_with_another_legal_action(tmp_path: Path) -> None:
    s = new_game("medina-v1", 3, 2)  # the start merchant first

    async def script(stream: FakeStream) -> None:
        await stream.hello()
        stream.send(welcome(s, s.to_move))
        stream.send(request(s, 3))
        first = await stream.reply()
        stream.send(rejected(3))
        second = await stream.reply()
        assert first.action.kind == second.action.kind == game_pb2.ACTION_KIND_START_MERCHANT
        assert second.action != first.action
        for reply in (first, second):
            assert is_legal(s, action_from_proto(reply.action, s.rules.geometry))
        stream.send(ended(3))

    async def go() -> int:
        async with fake_server([script]) as (_, address):
            argv = ["--server", address, "--token", "T", "--log", str(tmp_path / "js.log")]
            return await asyncio.to_thread(
                stdio_main, [*argv, "--", "node", str(RANDOM_JS), "--seed", "5"]
            )

    assert run(go()) == EXIT_ENDED
    log = (tmp_path / "js.log").read_text()
    assert "random_bot: playing seat" in log and "refused (palace-separation)" in log
    assert "random_bot: match over" in log
