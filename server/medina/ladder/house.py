"""House bots: the ladder's own example bots (the demo's players, a public ladder's bosses),
each an ordinary bot process of the SDK connected with a key like any other bot.

A house bot's account is ``house-<name>`` (owner ``house``) unless named otherwise; its key
is made afresh at each start (only its hash is stored), so no key is kept on disk."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from medina.boundary.children import dying_with_parent
from medina.boundary.environment import for_others
from medina.storage.ladder import LadderStore
from medina.strategies.search import SearchLevelError, level_config

from . import accounts
from .service import Ladder

__all__ = [
    "HouseBot",
    "HouseNameTaken",
    "HouseUnavailable",
    "check_house",
    "drain_house",
    "parse_house",
    "require_sdk",
    "start_house",
    "stop_house",
]

log = logging.getLogger("medina.ladder")

#: What ``python -m medina_client`` plays (``--bot``); the ladder does not import the SDK.
KNOWN = ("random", "greedy", "search", "champion")


class HouseUnavailable(ValueError):
    """The house bots' program, the SDK's ``python -m medina_client``, is not installed."""


def require_sdk() -> None:
    """Raise ``HouseUnavailable`` unless this Python can run ``-m medina_client``: the
    server does not depend on the SDK, and a house bot that cannot start would only show as
    an empty ladder."""
    if importlib.util.find_spec("medina_client") is None:
        raise HouseUnavailable(
            "house bots run the SDK's example bots (python -m medina_client), which is not "
            "installed here: pip install 'medina-arena[house]'"
        )


class HouseNameTaken(ValueError):
    """An account of a house bot's name exists with another owner than the house's: the
    house bot would take its key and play on its rating line."""


@dataclass(frozen=True, slots=True)
class HouseBot:
    """A house bot: its account, owner, and the SDK options that choose its play."""

    name: str
    owner: str
    options: tuple[str, ...]


def parse_house(text: str) -> HouseBot:
    """``[NAME=]BOT [OPTIONS]``, e.g. ``greedy`` or ``boss=search --level 2``; ValueError
    naming the fault."""
    require_sdk()
    name, eq, rest = text.partition("=")
    if not eq:
        name, rest = "", text
    words = shlex.split(rest)
    if not words or words[0] not in KNOWN:
        raise ValueError(f"--house {text!r}: the bot is one of {', '.join(KNOWN)}")
    _check_level(text, words)
    slug = re.sub(r"[^A-Za-z0-9._]+", "-", " ".join(w.lstrip("-") for w in words)).strip("-")
    account = accounts.check_name(name.strip() or f"house-{slug}"[:64])
    return HouseBot(account, accounts.HOUSE_OWNER, ("--bot", *words))


def _check_level(text: str, words: list[str]) -> None:
    """A search level the SDK would refuse is refused here, before the ladder starts: the
    house bot would otherwise exit at once, with the reason only in its log."""
    for i, word in enumerate(words):
        value = word.partition("=")[2] if word.startswith("--level=") else None
        if word == "--level":
            value = words[i + 1] if i + 1 < len(words) else ""
        if value is None:
            continue
        try:
            level_config(int(value))
        except ValueError as exc:
            detail = (
                str(exc)
                if isinstance(exc, SearchLevelError)
                else f"--level takes a whole number, got {value!r}"
            )
            raise ValueError(f"--house {text!r}: {detail}") from None


async def check_house(store: LadderStore, bots: tuple[HouseBot, ...]) -> None:
    """HouseNameTaken (naming the account and what to do) when an account of a house bot's
    name exists with an owner other than the house's (a database from before the house
    names were reserved, or a house bot named NAME=BOT after a visitor's bot), or is
    revoked."""
    found = {a.name: a for a in await asyncio.to_thread(store.accounts)}
    for bot in bots:
        account = found.get(bot.name)
        owner = bot.owner if account is None else account.owner
        if account is not None and account.revoked:
            # It was a traceback: a revoked account takes no new key.
            raise HouseNameTaken(
                f"--house: account {bot.name!r} is revoked, for good: a house bot cannot play "
                "under it; name the house bot otherwise (--house NAME=BOT, a name no account "
                "has)"
            )
        if owner != bot.owner:
            raise HouseNameTaken(
                f"--house: account {bot.name!r} exists with owner {owner!r}, not "
                f"{bot.owner!r}: the house bot would take its key and its rating line; "
                "name the house bot otherwise (--house NAME=BOT, a name no account has)"
            )


async def start_house(
    store: LadderStore, address: str, bots: tuple[HouseBot, ...], logs: Path
) -> list[asyncio.subprocess.Process]:
    """Create or re-key each house bot's account and start its process on ``address``;
    HouseNameTaken (nothing started) when a house name is another owner's (``check_house``)."""
    if bots:
        require_sdk()
    await check_house(store, bots)
    known = {a.name for a in await asyncio.to_thread(store.accounts)}
    logs.mkdir(parents=True, exist_ok=True)
    procs = []
    for bot in bots:
        made = accounts.new_key()
        if bot.name in known:
            await asyncio.to_thread(store.set_key, bot.name, made.key_id, made.salt, made.digest)
        else:
            await asyncio.to_thread(
                store.add_bot, bot.name, bot.owner, made.key_id, made.salt, made.digest
            )
        out = (logs / f"bot-{bot.name}.log").open("ab")
        # The key travels in the environment, never on a command line `ps` shows.
        env = {**_environ(), "MEDINA_BOT_KEY": made.key}
        argv = [sys.executable, "-m", "medina_client", "--server", address]
        argv += ["--name", bot.name, "--quiet", *bot.options]
        procs.append(
            await asyncio.create_subprocess_exec(
                *dying_with_parent(argv, env, None),  # a SIGKILLed ladder leaves none behind
                stdout=out,
                stderr=out,
                env=env,
                start_new_session=True,
            )
        )
        log.info("house bot %s started (pid %d)", bot.name, procs[-1].pid)
    return procs


async def drain_house(
    ladder: Ladder, procs: list[asyncio.subprocess.Process], grace_s: float = 30.0
) -> None:
    """A ladder stopping: form no more matches, then let the house bots finish theirs and
    stop them (matching went on while they finished: visitors were given matches up to the
    end of the drain, only to have them aborted)."""
    ladder.stop_matching()
    await stop_house(procs, grace_s)


async def stop_house(procs: list[asyncio.subprocess.Process], grace_s: float = 30.0) -> None:
    """Ask each house bot to leave (it finishes its matches in play), then stop it."""
    for proc in procs:
        if proc.returncode is None:
            proc.terminate()
    try:
        async with asyncio.timeout(grace_s):
            await asyncio.gather(*(p.wait() for p in procs))
    except TimeoutError:
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
        await asyncio.gather(*(p.wait() for p in procs))


def _environ() -> dict[str, str]:
    """This process's environment without a seat token (a house bot plays on the ladder)
    and without what the arena set for itself."""
    return {k: v for k, v in for_others().items() if k != "MEDINA_TOKEN"}
