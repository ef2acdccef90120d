"""``python -m medina_client --server HOST:PORT --token T --bot random|greedy|search|champion``.

``--bot search`` takes ``--level 1`` or ``2`` (default 2; the champion's search held to one or three
plies), ``--budget-ms M`` (default 1 000 ms, at most half of the time each request allows;
the level's depth is what normally ends a search) and ``--verbose``. ``--bot champion``
takes ``--budget-ms M`` (default 300 ms, at most half of the time each request allows) and
``--verbose``. ``--verbose`` logs the move, its value, the depth reached and the time of
each decision on stderr.

``python -m medina_client --policy module:function`` plays a policy over the observation
encoding instead (docs/encoding.md; needs numpy): ``function`` gets the observation the
learning environments give and returns an action index.

``python -m medina_client --server HOST:PORT --bot-key KEY --bot greedy`` plays on a ladder
until stopped: match after match, a fresh bot each (the first Ctrl-C finishes the matches in
play, a second quits; docs/ladder.md).

``python -m medina_client stdio [OPTIONS] -- COMMAND ARGS...`` plays with a program that
speaks JSON lines on stdin/stdout instead (``python -m medina_client stdio --help``).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys

from medina.strategies.champion import ChampionConfigError
from medina.strategies.search import DEFAULT_LEVEL, LEVELS, SearchLevelError

from .bot import Bot
from .bots import BOTS, ChampionBot, SearchBot
from .connection import add_tls_options, credentials_from_files
from .errors import AddressError, MedinaClientError, SessionOver
from .ladder import LadderOptions, run_ladder, seat_player
from .route import check_address
from .runner import play
from .stdio import FREE_VALUES, glue_values
from .stdio import main as stdio_main


class OptionError(ValueError):
    """Options that do not go together; the message names them."""


def _make_bot(args: argparse.Namespace) -> Bot:
    """The chosen example bot or policy; the search options only go with ``--bot search``
    (``--budget-ms`` and ``--verbose`` also with ``--bot champion``)."""
    if args.policy is not None and args.bot is not None:
        raise OptionError("--bot and --policy exclude each other")
    if args.bot == "champion":
        if args.level is not None:
            raise SearchLevelError("--level only applies to --bot search")
        return ChampionBot(args.seed, budget_ms=args.budget_ms, verbose=args.verbose)
    if args.bot != "search":
        given = [
            flag
            for flag, value in (
                ("--level", args.level),
                ("--budget-ms", args.budget_ms),
                ("--verbose", args.verbose or None),
            )
            if value is not None
        ]
        if given:
            raise SearchLevelError(f"{', '.join(given)} only apply to --bot search (and champion)")
    if args.policy is not None:
        if args.seed is not None or args.no_legal_actions:
            raise OptionError("--seed and --no-legal-actions do not apply to --policy")
        from .policy import PolicyBot, load_policy  # numpy: only for a policy

        return PolicyBot(load_policy(args.policy), name=args.policy.rpartition(":")[2])
    if args.bot != "search":
        return BOTS[args.bot or "random"](args.seed)
    level = DEFAULT_LEVEL if args.level is None else args.level
    return SearchBot(args.seed, level=level, budget_ms=args.budget_ms, verbose=args.verbose)


def main(argv: list[str] | None = None) -> int:
    """Run one example bot for one seat; 0 when the match ended.

    ``stdio`` as the first argument runs the stdio bridge (``medina_client.stdio.main``).
    """
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["stdio"]:
        return stdio_main(argv[1:])
    argv = glue_values(argv, FREE_VALUES)
    p = argparse.ArgumentParser(
        prog="python -m medina_client",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--server", default=os.environ.get("MEDINA_SERVER"), help="HOST:PORT")
    p.add_argument("--token", default=os.environ.get("MEDINA_TOKEN"), help="seat token")
    ladder = p.add_argument_group("ladder (instead of --token)")
    ladder.add_argument(
        "--bot-key",
        default=os.environ.get("MEDINA_BOT_KEY"),
        help="play on the ladder at --server with this bot key (env MEDINA_BOT_KEY)",
    )
    ladder.add_argument(
        "--bot-version", default="", help="the version to rate (a new one starts a new line)"
    )
    ladder.add_argument(
        "--rulesets", help="comma-separated rulesets the bot plays (default: all offered)"
    )
    ladder.add_argument(
        "--players", help="comma-separated player counts the bot plays (default: all)"
    )
    ladder.add_argument(
        "--max-matches", type=int, help="matches at once (default: the ladder's, 1)"
    )
    p.add_argument("--bot", choices=sorted(BOTS), help="which example bot (default random)")
    p.add_argument(
        "--policy",
        metavar="MODULE:FUNCTION",
        help="play this policy over the observation encoding instead of an example bot",
    )
    p.add_argument("--name", help="bot name shown in results")
    p.add_argument(
        "--seed",
        type=int,
        help="seed of the bot's own randomness (default: from the match, its seed and this "
        "seat, so another match seed plays another game)",
    )
    p.add_argument("--no-legal-actions", action="store_true", help="ask the server to omit them")
    updates = p.add_mutually_exclusive_group()
    updates.add_argument(
        "--no-updates",
        dest="updates",
        action="store_false",
        help="ask the server for no Update messages (requests carry the events anyway); the "
        "default unless the bot overrides on_update",
    )
    updates.add_argument(
        "--updates",
        dest="updates",
        action="store_true",
        help="ask for Update messages even though the bot does not use them",
    )
    p.set_defaults(updates=None)
    add_tls_options(p)
    p.add_argument("--quiet", action="store_true", help="no result line")
    p.add_argument(
        "--level",
        type=int,
        help=f"search level {min(LEVELS)}..{max(LEVELS)} (default {DEFAULT_LEVEL})",
    )
    p.add_argument("--budget-ms", type=int, help="search / champion time per decision in ms")
    p.add_argument(
        "--verbose",
        action="store_true",
        help="search: log the top candidates per decision; champion: move, depth, time",
    )
    args = p.parse_args(argv)
    if args.bot_key and args.token:
        p.error("--token plays one seat, --bot-key plays on a ladder: give one")
    if not args.server or not (args.token or args.bot_key):
        p.error(
            "--server and --token (or --bot-key) are required "
            "(or MEDINA_SERVER / MEDINA_TOKEN / MEDINA_BOT_KEY)"
        )
    try:
        check_address(args.server)
    except AddressError as exc:
        p.error(str(exc))
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(name)s: %(message)s"
    )
    try:
        bot = _make_bot(args)
    except (SearchLevelError, ChampionConfigError, OptionError, MedinaClientError) as exc:
        p.error(str(exc))
    if args.name:
        bot.name = args.name
    if args.bot_key:
        try:
            options = _ladder_options(args)
        except OptionError as exc:
            p.error(str(exc))
        return _play_ladder(args, options)
    try:
        credentials = credentials_from_files(args.tls_ca, args.tls_cert, args.tls_key)
        result = asyncio.run(
            play(
                bot,
                args.server,
                args.token,
                omit_legal_actions=args.no_legal_actions,
                omit_updates=None if args.updates is None else not args.updates,
                credentials=credentials,
            )
        )
    except SessionOver as exc:
        # Nothing left to play on this seat (the match is over, the seat forfeited, its
        # worker died): said, and not an error of this bot's making.
        print(f"medina_client: {exc}", file=sys.stderr)
        return 0 if exc.reason == "MATCH_OVER" else 1
    except (MedinaClientError, OSError, ValueError) as exc:
        print(f"medina_client: {exc}", file=sys.stderr)
        return 1
    if not args.quiet:
        mine = [s for s in result.seats if s.name == bot.name] or list(result.seats)
        line = ", ".join(f"seat {s.seat} {s.name}: {s.total} (rank {s.rank})" for s in mine)
        print(f"match over: {line}")
    return 0


def _ladder_options(args: argparse.Namespace) -> LadderOptions:
    def ints(text: str | None, what: str) -> tuple[int, ...]:
        try:
            return tuple(int(x) for x in text.split(",")) if text else ()
        except ValueError:
            raise OptionError(f"{what} {text!r}: comma-separated integers") from None

    if args.max_matches is not None and args.max_matches < 1:
        raise OptionError("--max-matches must be at least 1")
    return LadderOptions(
        version=args.bot_version,
        rulesets=tuple(r for r in (args.rulesets or "").split(",") if r),
        players=ints(args.players, "--players"),
        max_matches=args.max_matches,
    )


def _play_ladder(args: argparse.Namespace, options: LadderOptions) -> int:
    """Play on the ladder until Ctrl-C (finish the matches in play) or a second Ctrl-C."""

    def make_bot() -> Bot:
        bot = _make_bot(args)
        if args.name:
            bot.name = args.name
        return bot

    try:
        credentials = credentials_from_files(args.tls_ca, args.tls_cert, args.tls_key)
    except (OSError, ValueError) as exc:
        print(f"medina_client: {exc}", file=sys.stderr)
        return 1
    return run_ladder(
        seat_player(make_bot, credentials),
        args.server,
        args.bot_key,
        options,
        credentials=credentials,
        quiet=args.quiet,
        prog="medina_client",
    )


if __name__ == "__main__":
    sys.exit(main())
