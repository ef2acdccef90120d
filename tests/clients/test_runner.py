"""The play loop against a scripted fake server: replies, refusals, events, the end, reconnects."""

from __future__ import annotations

from collections.abc import Sequence

import grpc
import pytest
from medina.engine import Action, apply_action, is_legal, new_game
from medina.v1 import arena_pb2, common_pb2, game_pb2, match_pb2
from medina.wire.convert import action_from_proto, events_to_proto
from medina_client import Bot, ConnectionLost, HandshakeError, Turn, play
from medina_client.bots import RandomBot

from .fake_arena import FakeStream, Script, ended, fake_server, request, run, welcome


class Recorder(Bot):
    """Plays the first legal action and logs every call the SDK makes."""

    name = "recorder"
    version = "2.5"

    def __init__(self) -> None:
        self.log: list[str] = []
        self.turns: list[Turn] = []
        self.events_known: list[int] = []  # the local state's history length at each choice

    def choose(self, turn: Turn) -> Action:
        self.log.append(f"choose {turn.request_id}")
        self.turns.append(turn)
        self.events_known.append(turn.state().n_events)
        return turn.legal[0]

    def on_start(self, welcome: arena_pb2.Welcome) -> None:
        self.log.append(f"start {welcome.seat}")

    def on_update(self, events: Sequence[game_pb2.Event]) -> None:
        self.log.append(f"update {[e.index for e in events]}")

    def on_rejected(self, rejected: arena_pb2.Rejected) -> None:
        self.log.append(f"rejected {rejected.request_id} {rejected.rule}")

    def on_notice(self, notice: arena_pb2.Notice) -> None:
        self.log.append(f"notice {notice.request_id}")

    def on_end(self, result: match_pb2.MatchResult) -> None:
        self.log.append(f"end {result.ending == match_pb2.MATCH_ENDING_COMPLETE}")


def rejected(request_id: int, time_left_ms: int) -> arena_pb2.PlayResponse:
    return arena_pb2.PlayResponse(
        rejected=arena_pb2.Rejected(
            request_id=request_id,
            code=common_pb2.ERROR_CODE_ILLEGAL_ACTION,
            rule="palace-separation",
            message="building at F7 touches the brown palace at G8",
            rejections_left=2,
            clock=arena_pb2.Clock(time_left_ms=time_left_ms, bank_ms=59_000),
        )
    )


def test_a_scripted_match_with_a_refusal_and_a_retry() -> None:
    s = new_game("medina-v2", 2, 3)
    assert s.to_move == 0

    async def script(stream: FakeStream) -> None:
        hello = await stream.hello()
        assert hello == arena_pb2.Hello(
            protocol_version=1,
            bot_name="recorder",
            bot_version="2.5",
            token="tok",
            protocol_minor=1,
            features=["forfeit-notices", "redirect"],
        )
        stream.send(welcome(s, 0))
        stream.send(request(s, 7))
        first = await stream.reply()
        assert first.request_id == 7
        stream.send(rejected(7, time_left_ms=4000))
        second = await stream.reply()
        assert second.request_id == 7
        assert second.action != first.action
        action = action_from_proto(second.action, s.rules.geometry)
        assert is_legal(s, action)
        after = apply_action(s, action)
        new = events_to_proto(s.n_events, after.events_since(s.n_events))
        stream.send(arena_pb2.PlayResponse(update=game_pb2.Update(events=new)))
        stream.send(arena_pb2.PlayResponse(notice=arena_pb2.Notice(request_id=9)))
        stream.send(ended(2))

    bot = Recorder()

    async def main() -> match_pb2.MatchResult:
        async with fake_server([script]) as (arena, address):
            result = await play(bot, address, "tok")
        assert arena.streams == 1
        return result

    result = run(main())
    assert result.ending == match_pb2.MATCH_ENDING_COMPLETE and [r.total for r in result.seats] == [
        10,
        9,
    ]
    assert bot.log[:4] == ["start 0", "choose 7", "rejected 7 palace-separation", "choose 7"]
    assert bot.log[4].startswith(f"update [{s.n_events}")
    assert bot.log[5:] == ["notice 9", "end True"]
    first, retry = bot.turns
    assert retry.excluded == {first.legal[0]}
    assert first.legal[0] not in retry.legal
    assert len(retry.legal) == len(first.legal) - 1
    assert (first.time_left_ms, retry.time_left_ms) == (5000, 4000)
    assert retry.request_id == 7
    assert bot.events_known == [s.n_events, s.n_events]


def test_the_sdk_asks_for_requests_without_legal_actions() -> None:
    s = new_game("medina-v1", 3, 8)

    async def script(stream: FakeStream) -> None:
        hello = await stream.hello()
        assert hello.omit_legal_actions
        stream.send(welcome(s, s.to_move))
        stream.send(request(s, 1, legal=False))
        reply = await stream.reply()
        assert is_legal(s, action_from_proto(reply.action, s.rules.geometry))
        stream.send(ended(3))

    async def main() -> None:
        async with fake_server([script]) as (_, address):
            await play(RandomBot(1), address, "tok", omit_legal_actions=True)

    run(main())


def drop_after_one_reply(request_id: int, resume_expected: str, how: str) -> Script:
    """A script: handshake, one request and its reply, then the stream breaks
    (``how``: "close" ends it with status OK before MatchEnded, "abort" with UNAVAILABLE)."""

    async def script(stream: FakeStream) -> None:
        hello = await stream.hello()
        assert hello.resume_token == resume_expected
        stream.send(welcome(new_game("medina-v2", 2, 5), 0, resume_token="r1"))
        stream.send(request(new_game("medina-v2", 2, 5), request_id))
        reply = await stream.reply()
        assert reply.request_id == request_id
        if how == "abort":
            stream.abort(grpc.StatusCode.UNAVAILABLE, "server going away")

    return script


def test_play_reconnects_with_the_resume_token_after_each_break() -> None:
    async def last(stream: FakeStream) -> None:
        hello = await stream.hello()
        assert hello.resume_token == "r1"
        stream.send(welcome(new_game("medina-v2", 2, 5), 0, resume_token="r1"))
        stream.send(request(new_game("medina-v2", 2, 5), 2))
        assert (await stream.reply()).request_id == 2
        stream.send(ended(2))

    scripts = [
        drop_after_one_reply(1, "", "close"),
        drop_after_one_reply(1, "r1", "abort"),  # the open request again, same id
        last,
    ]
    bot = Recorder()

    async def main() -> match_pb2.MatchResult:
        async with fake_server(scripts) as (arena, address):
            result = await play(bot, address, "tok", first_backoff_s=0.01)
        assert arena.streams == 3
        return result

    assert run(main()).ending == match_pb2.MATCH_ENDING_COMPLETE
    assert bot.log == [
        "start 0",
        "choose 1",
        "start 0",
        "choose 1",
        "start 0",
        "choose 2",
        "end True",
    ]


def test_a_refused_reconnect_is_a_handshake_error() -> None:
    async def over(stream: FakeStream) -> None:
        assert (await stream.hello()).resume_token == "r1"
        stream.abort(grpc.StatusCode.FAILED_PRECONDITION, "the match is over")

    async def main() -> None:
        async with fake_server([drop_after_one_reply(1, "", "close"), over]) as (_, address):
            with pytest.raises(HandshakeError, match="the match is over"):
                await play(Recorder(), address, "tok", first_backoff_s=0.01)

    run(main())


def test_play_gives_up_when_the_server_stays_away() -> None:
    async def main() -> None:
        async with fake_server([]) as (_, address):
            pass  # the server is gone: nobody listens on its port any more
        with pytest.raises(ConnectionLost, match="UNAVAILABLE"):
            await play(Recorder(), address, "tok", reconnect_for_s=0.2, first_backoff_s=0.01)

    run(main())


def test_play_follows_a_redirect_and_falls_back_when_it_leads_nowhere() -> None:
    s = new_game("medina-v2", 2, 6)

    def finish(expect_redirects: bool) -> Script:
        async def script(stream: FakeStream) -> None:
            hello = await stream.hello()
            assert ("redirect" in hello.features) is expect_redirects
            stream.send(welcome(s, 0))
            stream.send(request(s, 1))
            assert (await stream.reply()).request_id == 1
            stream.send(ended(2))

        return script

    async def main() -> None:
        async with fake_server([finish(True)]) as (there, target):
            port = int(target.rpartition(":")[2])

            async def redirect(stream: FakeStream) -> None:
                assert "redirect" in (await stream.hello()).features
                stream.send(arena_pb2.PlayResponse(redirect=arena_pb2.Redirect(port=port)))

            async with fake_server([redirect]) as (front, address):
                await play(RandomBot(1), address, "tok")
            assert (front.streams, there.streams) == (1, 1)  # played where it was sent

        # A redirect to an address nobody listens on: back to the given one, no more asked.
        dead = int(target.rpartition(":")[2])  # that server has stopped

        async def nowhere(stream: FakeStream) -> None:
            await stream.hello()
            stream.send(arena_pb2.PlayResponse(redirect=arena_pb2.Redirect(port=dead)))

        async with fake_server([nowhere, finish(False)]) as (front, address):
            await play(RandomBot(1), address, "tok", first_backoff_s=0.01)
        assert front.streams == 2

    run(main())


class Listener(Bot):
    """A bot that uses Update messages."""

    def choose(self, turn: Turn) -> Action:
        return turn.legal[0]

    def on_update(self, events: Sequence[game_pb2.Event]) -> None:
        pass


@pytest.mark.parametrize(
    ("bot", "omit", "expected"),
    [
        (RandomBot(1), None, True),  # the default: updates only for a bot that uses them
        (Listener(), None, False),
        (Listener(), True, True),
        (RandomBot(1), False, False),
    ],
)
def test_updates_are_asked_for_only_when_the_bot_uses_them(
    bot: Bot, omit: bool | None, expected: bool
) -> None:
    s = new_game("medina-v2", 2, 7)

    async def script(stream: FakeStream) -> None:
        assert (await stream.hello()).omit_updates is expected
        stream.send(welcome(s, 0))
        stream.send(request(s, 1))
        await stream.reply()
        stream.send(ended(2))

    async def main() -> None:
        async with fake_server([script]) as (_, address):
            await play(bot, address, "tok", omit_updates=omit)

    run(main())
