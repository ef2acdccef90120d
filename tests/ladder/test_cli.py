"""The ladder's and the accounts' commands: what they print, and every bad input refused
with a message naming it (exit status 2), nothing half-written."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from medina.cli import main
from medina.cli.web_cmd import ladder_standings
from medina.ladder import ratings
from medina.ladder.house import parse_house
from medina.storage.ladder import LadderStore, StoredSeat
from medina.web.pages import standings_page

from .harness import Bots, LadderServer, add_bot, wait_until
from .test_honesty import play
from .test_store import add, line, rater


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse refusing an option's value: exit 2, as a user sees
        assert isinstance(exc.code, int)
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_accounts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "l.db")
    code, out, err = run(capsys, "bots", "add", "alpha", "--owner", "ann", "--db", db)
    assert code == 0 and out.startswith("mdk_") and "shown once" in err
    key = out.strip()
    code, out, err = run(capsys, "bots", "add", "alpha", "--db", db)
    assert code == 2 and "exists already" in err
    code, out, err = run(capsys, "bots", "add", "bad name", "--db", db)
    assert code == 2 and "1-64 characters" in err
    # The owner is a column of the standings' CSV and JSON: a newline in it split a row.
    code, out, err = run(capsys, "bots", "add", "beta", "--owner", "ann\nx", "--db", db)
    assert (code, out) == (2, "") and "--owner 'ann\\nx' holds a control character (U+000A)" in err
    code, out, _ = run(capsys, "bots", "list", "--db", db)
    assert "alpha" in out and "ann" in out and key not in out
    code, out, err = run(capsys, "bots", "rotate", "alpha", "--db", db)
    assert code == 0 and out.strip() != key and out.startswith("mdk_")
    code, out, err = run(capsys, "bots", "revoke", "nobody", "--db", db)
    assert code == 2 and "no bot named 'nobody'" in err
    code, out, _ = run(capsys, "bots", "revoke", "alpha", "--db", db)
    # What a running ladder does (LadderService._revocations polls the keys every second),
    # not the lease renewal (a third of --lease-s) it once named.
    assert code == 0 and "end within a second" in out and "lease" not in out
    assert "matches in play are called off unrated" in out
    code, out, _ = run(capsys, "bots", "list", "--db", db)
    assert "revoked" in out


def test_a_suspended_version_is_listed_and_lifted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "l.db")
    store = LadderStore(db)
    a, b = (add(store, name) for name in ("alpha", "beta"))
    lines = [store.line(bot, "v1", 25.0, 8.0).id for bot in (a, b)]
    store.line(a, "v\x1b[2J2", 25.0, 8.0)  # a version with a terminal escape in it
    mid = store.new_match("s", "medina-v2", 2, 1000, 1, lines)
    store.started(mid, "s", "m1")
    outcome = [StoredSeat(0, 1, 2, "crashed", 0, ""), StoredSeat(1, 9, 1, "normal", 0, "")]
    store.finish(mid, "s", outcome, "complete", "r.jsonl", rater, suspend_after=1, window=10,
                 faults=frozenset({"crashed"}))  # fmt: skip
    code, out, _ = run(capsys, "bots", "list", "--db", db)
    assert code == 0 and "version v1 suspended: 1 faults" in out and "\x1b" not in out
    code, _, err = run(capsys, "bots", "unsuspend", "alpha", "v9", "--db", db)
    assert code == 2 and "no version 'v9'" in err
    code, _, err = run(capsys, "bots", "unsuspend", "nobody", "v1", "--db", db)
    assert code == 2 and "no bot named 'nobody'" in err
    code, out, _ = run(capsys, "bots", "unsuspend", "alpha", "v1", "--db", db)
    assert code == 0 and "may play again" in out
    # Nothing to do is said, with exit status 1 (as a revoked bot's, below).
    code, out, _ = run(capsys, "bots", "unsuspend", "alpha", "v1", "--db", db)
    assert code == 1 and "was not suspended: nothing done" in out
    code, out, _ = run(capsys, "bots", "list", "--db", db)
    assert "suspended" not in out


def test_unsuspending_a_revoked_bot_says_it_stays_revoked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It printed "may play again" and exited 0 for a bot that can never play again.
    db = str(tmp_path / "l.db")
    store = LadderStore(db)
    a, b = (add(store, name) for name in ("alpha", "beta"))
    lines = [store.line(bot, "v1", 25.0, 8.0).id for bot in (a, b)]
    mid = store.new_match("s", "medina-v2", 2, 1000, 1, lines)
    store.started(mid, "s", "m1")
    outcome = [StoredSeat(0, 1, 2, "crashed", 0, ""), StoredSeat(1, 9, 1, "normal", 0, "")]
    store.finish(mid, "s", outcome, "complete", "r.jsonl", rater, suspend_after=1, window=10,
                 faults=frozenset({"crashed"}))  # fmt: skip
    assert run(capsys, "bots", "revoke", "alpha", "--db", db)[0] == 0
    for version in ("v1", "v1"):  # the suspension stays: a second try is refused alike
        code, out, err = run(capsys, "bots", "unsuspend", "alpha", version, "--db", db)
        assert (code, out) == (1, "")
        assert "bot 'alpha' is revoked, for good: unsuspend lifts a version's suspension" in err
    assert store.account("alpha").suspended == {"v1": store.account("alpha").suspended["v1"]}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("house-greedy",), "names starting with 'house-' are reserved for the ladder's house"),
        (("House-Greedy",), "names starting with 'house-' are reserved"),
        (("sneaky", "--owner", "house"), "owner 'house' is reserved for the ladder's house bots"),
        (("sneaky", "--owner", "House"), "owner 'House' is reserved"),
    ],
)
def test_house_names_and_owner_are_reserved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    # `bots add house-greedy` was taken over by `--house greedy` at the next start; a bot
    # of owner 'house' never met the house bots.
    db = tmp_path / "l.db"
    code, out, err = run(capsys, "bots", "add", *argv, "--db", str(db))
    assert (code, out) == (2, "") and message in err, err
    assert not db.exists() or LadderStore(str(db)).accounts() == []


def test_serve_refuses_a_house_bot_whose_name_is_another_owners(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A database from before the names were reserved: the house bot took the account's key
    # (its author's stopped working) and played on its rating line.
    db = str(tmp_path / "l.db")
    store = LadderStore(db)
    store.add_bot("house-greedy", "alice", "0" * 16, "salt", "digest")
    code, _, err = run(
        capsys, "ladder", "serve", "--db", db, "--port", "0", "--arena-port", "0",
        "--records", str(tmp_path / "records"), "--house", "greedy",
    )  # fmt: skip
    assert code == 2
    assert (
        "--house: account 'house-greedy' exists with owner 'alice', not 'house': the house "
        "bot would take its key and its rating line; name the house bot otherwise "
        "(--house NAME=BOT, a name no account has)"
    ) in err
    row = store.key_row("0" * 16)
    assert row is not None and row[0].owner == "alice", "the author's key still works"


def test_serve_refuses_a_house_bot_whose_account_is_revoked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The house's own account, revoked by the organiser: `--house greedy` ended in a
    # traceback (BotRevokedError from giving it a new key).
    db = str(tmp_path / "l.db")
    store = LadderStore(db)
    store.add_bot("house-greedy", "house", "0" * 16, "salt", "digest")
    store.revoke("house-greedy")
    code, _, err = run(
        capsys, "ladder", "serve", "--db", db, "--port", "0", "--arena-port", "0",
        "--records", str(tmp_path / "records"), "--house", "greedy",
    )  # fmt: skip
    assert code == 2
    assert "--house: account 'house-greedy' is revoked, for good" in err, err


def test_bots_list_says_in_words_that_a_bot_has_no_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a bot whose version was empty read "versions: ''"; one without any, "versions: -"
    db = str(tmp_path / "l.db")
    store = LadderStore(db)
    store.line(add(store, "alpha"), "", 25.0, 8.0)  # the bot named no version
    add(store, "beta")  # no version line yet
    code, out, _ = run(capsys, "bots", "list", "--db", db)
    listed = {line.split()[0]: line.split("versions: ")[1] for line in out.splitlines()}
    assert code == 0 and listed == {"alpha": "'' (no version named)", "beta": "none yet"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--offer", "medina-v2:5:1000"), "players"),
        (("--offer", "medina-v2:two:1000"), "integers"),
        (("--offer", "nope:2:1000"), "nope"),
        (("--offer", "medina-v2:2:0"), "DECISION_MS must be positive"),
        (("--offer", "medina-v2:2:1000:0"), "weight must be positive"),
        (("--offer", "medina-v2:2"), "RULESET:PLAYERS:DECISION_MS"),
        (("--exploration", "1.5"), "exploration"),
        (("--max-matches-per-bot", "0"), "at least 1"),
        (("--heartbeat-s", "0"), "argument --heartbeat-s: '0': must be 0.001 to 3600 seconds"),
        (("--lease-s", "nan"), "argument --lease-s: 'nan': must be 0.001 to 3600 seconds"),
        (("--hello-timeout-s", "-1"), "argument --hello-timeout-s: '-1': must be 0.001"),
        (("--connect-timeout-s", "0"), "argument --connect-timeout-s: '0': must be 0.001"),
        (("--connect-timeout-s", "inf"), "argument --connect-timeout-s: 'inf': must be"),
        (("--connect-timeout-s", "soon"), "'soon' is not a number of seconds"),
        (("--host", "0.0.0.0"), "--arena-public"),
        (("--host", "192.0.2.1", "--arena-public", "x:1"), "--organiser-token"),
        (("--arena-public", "x:50062"), "give --arena-port the port that address reaches"),
        (("--max-streams-per-client", "-1"), "--max-streams-per-client -1: must be 0"),
        (("--limit-loopback",), "--limit-loopback needs --organiser-token"),
    ],
)
def test_serve_refuses_bad_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    code, _, err = run(capsys, "ladder", "serve", "--db", str(tmp_path / "l.db"), *args)
    assert code == 2 and message in err, err


def test_standings_export_and_recompute(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # where a file named '-' would be written
    db = str(tmp_path / "l.db")
    store = LadderStore(db)
    lines = []
    for name in ("a", "b"):
        run(capsys, "bots", "add", name, "--db", db)
        account = store.account(name)
        lines.append(store.line(account.id, "v1", ratings.INITIAL.mu, ratings.INITIAL.sigma).id)
    mid = store.new_match("s", "medina-v2", 2, 1000, 1, lines)
    store.started(mid, "s", "m1")
    outcome = [StoredSeat(0, 40, 1, "normal", 0, ""), StoredSeat(1, 30, 2, "timeout", 3, "")]
    store.finish(mid, "s", outcome, "complete", "r.jsonl", rater, suspend_after=0, window=10,
                 faults=frozenset({"timeout"}))  # fmt: skip
    code, out, _ = run(capsys, "ladder", "standings", "--db", db)
    assert code == 0 and out.index(" a ") < out.index(" b ") and "timeout:1" in out
    assert "1 matches finished" in out
    code, out, _ = run(capsys, "ladder", "standings", "--db", db, "--format", "json")
    rows = json.loads(out)
    assert [r["bot"] for r in rows] == ["a", "b"] and rows[1]["faults"] == {"timeout": 1}
    target = tmp_path / "export.json"
    code, _, _ = run(capsys, "ladder", "export", "--db", db, "--out", str(target))
    data = json.loads(target.read_text())
    assert data["matches"][0]["seats"][1]["termination"] == "timeout"
    assert not list(tmp_path.glob("*.tmp"))
    code, out, _ = run(capsys, "ladder", "export", "--db", db, "--format", "csv")
    assert out.startswith("# standings\n") and "# matches\n" in out
    # '-' is stdout, as leaving the option out is, not a file named '-'
    code, dash, _ = run(capsys, "ladder", "export", "--db", db, "--format", "csv", "--out", "-")
    assert (code, dash) == (0, out)
    assert not (tmp_path / "-").exists()
    code, out, _ = run(capsys, "ladder", "recompute", "--db", db)
    assert code == 0 and "from 1 rated matches" in out
    store.engine.dispose()
    LadderStore(db).engine.dispose()
    # A stored rating changed behind the ladder's back is found.
    import sqlite3

    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE ladder_lines SET mu = mu + 1 WHERE version = 'v1'")
    code, out, _ = run(capsys, "ladder", "recompute", "--db", db)
    assert code == 1 and "2 line(s) differ" in out


def _ladder_with_a_throwaway_version(db: str) -> None:
    """``strong`` beat ``weak`` in 12 rated matches; ``throwaway`` forfeited its one."""
    store = LadderStore(db)
    strong, weak, throwaway = (
        store.line(add(store, name), "v1", ratings.INITIAL.mu, ratings.INITIAL.sigma).id
        for name in ("strong", "weak", "throwaway")
    )
    for n, pair in enumerate([(strong, weak)] * 12 + [(strong, throwaway)]):
        mid = store.new_match("s", "medina-v2", 2, 1000, n, list(pair))
        store.started(mid, "s", f"m{n}")
        lost = "no_show" if pair[1] == throwaway else "normal"
        outcome = [StoredSeat(0, 20, 1, "normal", 0, ""), StoredSeat(1, 0, 2, lost, 0, "")]
        store.finish(mid, "s", outcome, "complete", "r.jsonl", rater, suspend_after=0,
                     window=10, faults=frozenset({"no_show"}))  # fmt: skip
    store.engine.dispose()


def test_provisional_versions_are_listed_after_the_established(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A version with one forfeited game (ordinal about -0.4) was listed above an established
    # weak bot: an account's throwaway versions filled the standings.
    db = str(tmp_path / "l.db")
    _ladder_with_a_throwaway_version(db)

    def printed(*options: str) -> list[tuple[int, str, int, bool]]:
        code, out, err = run(capsys, "ladder", "standings", "--db", db, "--format", "json",
                             *options)  # fmt: skip
        assert code == 0, err
        return [(r["rank"], r["bot"], r["games"], r["provisional"]) for r in json.loads(out)]

    established = [(1, "strong", 13, False), (2, "weak", 12, False)]
    assert printed() == [*established, (3, "throwaway", 1, True)]
    # The provisional ones in rating order among themselves.
    assert printed("--min-games", "13") == [
        (1, "strong", 13, False), (2, "throwaway", 1, True), (3, "weak", 12, True)
    ]  # fmt: skip
    # 0: no provisional rule, the rating order alone (where the throwaway stands above weak).
    assert [bot for _, bot, _, _ in printed("--min-games", "0")] == ["strong", "throwaway", "weak"]
    code, out, _ = run(capsys, "ladder", "standings", "--db", db)
    (row,) = [r for r in out.splitlines() if " throwaway " in r]
    assert code == 0 and row.startswith("  3 ") and row.endswith("active, provisional")
    code, out, _ = run(capsys, "ladder", "standings", "--db", db, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["bot"], r["provisional"]) for r in rows] == [
        ("strong", "False"), ("weak", "False"), ("throwaway", "True")
    ]  # fmt: skip
    for fmt in ("json", "csv"):
        code, out, _ = run(capsys, "ladder", "export", "--db", db, "--format", fmt,
                           "--min-games", "0")  # fmt: skip
        assert code == 0 and out.index("throwaway") < out.index("weak")
    code, out, _ = run(capsys, "ladder", "export", "--db", db)
    assert [r["bot"] for r in json.loads(out)["standings"]] == ["strong", "weak", "throwaway"]
    # The page: the same rows, the provisional one marked.
    table = ladder_standings(db)()
    assert [(r.bot, r.provisional) for r in table.rows] == [
        ("strong@v1", False), ("weak@v1", False), ("throwaway@v1", True)
    ]  # fmt: skip
    html = standings_page(table)
    row = html.split('data-bot="throwaway@v1">')[1].split("</tr>")[0]
    assert '<td class="status">active, <span class="provisional">provisional</span></td>' in row
    assert "fewer than 10 rated games (provisional) last" in html
    assert [r.bot for r in ladder_standings(db, 0)().rows][1] == "throwaway@v1"
    for argv in (("ladder", "standings"), ("ladder", "export"), ("web", "--ladder-db", db)):
        code, _, err = run(capsys, *argv, "--db", db, "--min-games", "-1")
        assert code == 2 and "--min-games: '-1': must be 0 (no provisional rule) or more" in err


def test_standings_tell_long_versions_apart_and_say_no_mean_rank_before_a_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Versions were cut to 10 characters: both of these printed as `release-20`. A version
    # without a rated game showed mean rank 0.00 (the web page: '-').
    db = str(tmp_path / "l.db")
    run(capsys, "bots", "add", "a-bot-with-a-rather-long-name", "--db", db)
    store = LadderStore(db)
    account = store.account("a-bot-with-a-rather-long-name")
    versions = ("release-2026-11-29a", "release-2026-11-29b")
    for version in versions:
        store.line(account.id, version, ratings.INITIAL.mu, ratings.INITIAL.sigma)
    code, out, _ = run(capsys, "ladder", "standings", "--db", db)
    head, *rows = out.splitlines()[:3]
    assert code == 0
    for version in versions:
        (row,) = [r for r in rows if f" {version} " in r]
        assert " a-bot-with-a-rather-long-name " in row
        assert row.split()[-5:] == ["0", "-", "-", "active,", "provisional"]
    # The columns stay aligned under their heads.
    assert {r.index("release") for r in rows} == {head.index("version")}
    _, out, _ = run(capsys, "ladder", "standings", "--db", db, "--format", "json")
    assert [r["mean_rank"] for r in json.loads(out)] == [None, None]
    _, out, _ = run(capsys, "ladder", "standings", "--db", db, "--format", "csv")
    assert [r["mean_rank"] for r in csv.DictReader(io.StringIO(out))] == ["", ""]


def test_the_demo_plays_and_updates_the_standings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys, "ladder", "demo", "--dir", str(tmp_path), "--seconds", "12", "--every", "2"
    )
    assert code == 0
    tables = [block for block in out.split("\n\n") if "matches played" in block]
    assert len(tables) >= 2, out
    played = [int(t.split()[0]) for t in tables]
    assert played == sorted(played) and played[-1] > played[0] > -1
    assert "greedy" in tables[-1]


@pytest.mark.parametrize(
    ("text", "name", "options"),
    [
        ("greedy", "house-greedy", ("--bot", "greedy")),
        ("search --level 2", "house-search-level-2", ("--bot", "search", "--level", "2")),
        ("boss=champion", "boss", ("--bot", "champion")),
    ],
)
def test_house_bot_specs(text: str, name: str, options: tuple[str, ...]) -> None:
    bot = parse_house(text)
    assert (bot.name, bot.owner, bot.options) == (name, "house", options)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("boss=search --level 5", "search level must be one of 1, 2, got 5"),
        ("boss=search --level=0", "search level must be one of 1, 2, got 0"),
        ("search --level x", "--level takes a whole number, got 'x'"),
        ("search --level", "--level takes a whole number, got ''"),
    ],
)
def test_house_bots_with_a_level_the_sdk_refuses_are_refused_first(
    text: str, fragment: str
) -> None:
    with pytest.raises(ValueError, match="--house") as refused:
        parse_house(text)
    assert fragment in str(refused.value)


@pytest.mark.parametrize("text", ["", "alphazero", "bad name=greedy"])
def test_bad_house_bot_specs_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"--house|1-64 characters"):
        parse_house(text)


def test_house_bots_play_the_visitors(tmp_path: Path) -> None:
    db = str(tmp_path / "l.db")
    key = add_bot(db, "visitor")
    server = LadderServer.start(
        db, tmp_path, "house", "--offer", "medina-v2:2:300", "--house", "greedy",
        "--house", "boss=random",
    )  # fmt: skip
    bots = Bots(tmp_path)
    store = LadderStore(db)
    try:
        bots.sdk("visitor", server.address, key)
        wait_until(lambda: store.counts().get("finished", 0) >= 4, 90, "four matches")
    finally:
        bots.kill_all()
        server.stop()
    for m in store.matches():
        names = {s[1] for s in m.seats}
        assert "visitor" in names, "house bots share an owner: they never meet each other"
    accounts = {a.name: a.owner for a in store.accounts()}
    assert accounts == {"visitor": "visitor", "house-greedy": "house", "boss": "house"}


@pytest.mark.parametrize(
    "argv",
    [["ladder", "standings"], ["ladder", "export", "--format", "json"], ["bots", "list"]],
)
def test_a_missing_database_is_named_not_made(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "typo.db"
    assert main([*argv, "--db", str(db)]) == 2
    assert f"no ladder database at {db}" in capsys.readouterr().err
    assert not db.exists()


@pytest.mark.parametrize(
    ("where", "error"),
    [
        ("missing/export.json", "cannot write {d}/missing/export.json: No such file or directory"),
        ("", "--out: the path is empty (leave the option out for stdout)"),
        (".", "cannot write {d}: Is a directory"),
    ],
)
def test_an_export_that_cannot_be_written_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, error: str
) -> None:
    # it was a traceback, and a temporary file beside the target (``..tmp`` for ``.``)
    db = str(tmp_path / "l.db")
    run(capsys, "bots", "add", "a", "--db", db)
    out = str(tmp_path / where) if where else ""
    code, _, err = run(capsys, "ladder", "export", "--db", db, "--out", out)
    assert (code, err) == (2, "medina-arena ladder: " + error.format(d=tmp_path) + "\n")
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("l.db")) == []


def test_pairs_flag_a_farm_and_void_unrates_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "l.db")
    store = LadderStore(db)
    ids = {name: line(store, add(store, name)) for name in ("a", "b", "c", "d")}
    for n in range(22):
        play(store, [ids["a"], ids["b"]], [1, 2])  # b throws every game to a
        if n % 4 == 0:
            play(store, [ids["c"], ids["d"]], [1 + n % 2, 2 - n % 2])
            play(store, [ids["a"], ids["c"]], [2, 1])
    code, out, _ = run(capsys, "ladder", "pairs", "--db", db)
    rows = out.splitlines()
    assert code == 0 and rows[1].startswith("a@v1") and "finished ahead of b@v1 in 22 of 22" in out
    assert rows[-1] == "1 pair(s) listed (those with 20 or more games together), 1 flagged, " \
        "from 34 rated matches"  # fmt: skip
    code, out, _ = run(capsys, "ladder", "pairs", "--db", db, "--all", "--format", "json")
    found = json.loads(out)
    assert [(r["bot_a"], r["bot_b"], r["games"]) for r in found] == [
        ("a", "b", 22), ("c", "a", 6), ("c", "d", 6)
    ]  # fmt: skip
    assert found[0]["share_a"] == round(22 / 28, 3) and [r["suspicious"] for r in found[1:]] == [
        "",
        "",
    ]
    code, out, _ = run(capsys, "ladder", "pairs", "--db", db, "--min-games", "5", "--format", "csv")
    table = list(csv.DictReader(io.StringIO(out)))
    # From 5 games, c finishing ahead of a and d every time, and d playing only c, flag too.
    assert [r["suspicious"] for r in table][1:] == [
        "c@v1 finished ahead of a@v1 in 6 of 6 games",
        "d@v1 played 6 of its 6 rated games against c@v1; "
        "c@v1 finished ahead of d@v1 in 6 of 6 games",
    ]
    code, _, err = run(capsys, "ladder", "pairs", "--db", db, "--min-games", "0")
    assert code == 2 and "--min-games 0: must be 1 or more" in err

    code, _, err = run(capsys, "bots", "void", "b", "--db", db)
    assert code == 2 and "--reason" in err
    for blank in ("", "  "):
        code, out, err = run(capsys, "bots", "void", "b", "--reason", blank, "--db", db)
        assert (code, out) == (2, "") and "--reason is empty" in err
    code, _, err = run(capsys, "bots", "void", "b", "--reason", "x\ny", "--db", db)
    assert code == 2 and "control character" in err
    code, _, err = run(capsys, "bots", "void", "nobody", "--reason", "x", "--db", db)
    assert code == 2 and "no bot named 'nobody'" in err
    code, _, err = run(capsys, "bots", "void", "b", "v9", "--reason", "x", "--db", db)
    assert code == 2 and "bot 'b' has no version 'v9'" in err
    assert store.counts().get("voided", 0) == 0  # nothing half-written

    before = {x.bot: ratings.ordinal(x.mu, x.sigma) for x in store.lines()}
    code, out, _ = run(capsys, "bots", "void", "b", "v1", "--reason", "threw to a", "--db", db)
    assert code == 0 and "bot 'b' version 'v1': 22 rated match(es) voided" in out
    assert f"a 'v1': ordinal {before['a']:.2f} -> " in out and "games 28 -> 6" in out
    # d never met a or b, but met c after c met a: its rating moves too.
    assert all(f"{bot} 'v1': ordinal" in out for bot in "bcd")
    assert "not revoked" in out and "4 line(s) rerated" in out
    code, out, _ = run(capsys, "ladder", "recompute", "--db", db)
    assert code == 0 and "from 12 rated matches" in out
    code, out, _ = run(capsys, "ladder", "export", "--db", db)
    voided = [m for m in json.loads(out)["matches"] if m["status"] == "voided"]
    assert len(voided) == 22 and {m["detail"] for m in voided} == {"voided: threw to a"}
    assert {m["rated_seq"] for m in voided} == {None}
    code, out, _ = run(capsys, "ladder", "standings", "--db", db)
    assert "12 matches finished, 0 in play, 0 aborted, 22 voided" in out
    code, out, _ = run(capsys, "ladder", "pairs", "--db", db)
    assert "0 pair(s) listed" in out and "0 flagged" in out
