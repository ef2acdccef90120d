"""Tournament files: a good one is read whole; each mistake is named with file, key and line."""

from __future__ import annotations

from pathlib import Path

import pytest
from medina.referee.config import TimeoutPolicy
from medina.tournament.config import TournamentConfig, TournamentConfigError, load

GOOD = """\
name = "cup"
games = 8
seed = 5
format = "round-robin"

[clock]
decision_ms = 2000
bank_ms = 0

[policies]
on_timeout = "forfeit"
max_strikes = 2

[[variants]]
ruleset = "medina-v2"
players = 4

[[variants]]
ruleset = "medina-v1-2p"
players = 2

[[bots]]
name = "greedy"
command = "python -m medina_client --bot greedy"

[[bots]]
name = "random"
command = ["python", "-m", "medina_client"]
env = { SEED = "1" }

[[bots]]
name = "c"
command = "python c.py"
cwd = "."

[[bots]]
name = "d"
command = "python d.py"
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "cup.toml"
    p.write_text(text)
    return p


def test_a_good_file(tmp_path: Path) -> None:
    cfg = load(write(tmp_path, GOOD))
    assert cfg.name == "cup" and cfg.games == 8 and cfg.seed == 5 and cfg.paired
    assert [b.name for b in cfg.bots] == ["greedy", "random", "c", "d"]
    assert cfg.bots[0].command == ("python", "-m", "medina_client", "--bot", "greedy")
    assert cfg.bots[1].env == (("SEED", "1"),)
    assert cfg.time.decision_ms == 2000 and cfg.time.bank_ms == 0  # 0 is 0, not "default"
    assert cfg.policies.on_timeout is TimeoutPolicy.FORFEIT and cfg.policies.max_strikes == 2
    assert [(v.ruleset, v.players) for v in cfg.variants] == [("medina-v2", 4), ("medina-v1-2p", 2)]
    again = TournamentConfig.from_json(cfg.to_json())
    assert again == cfg and again.digest == cfg.digest


def test_the_digest_ignores_where_records_go(tmp_path: Path) -> None:
    a = load(write(tmp_path, GOOD))
    b = load(write(tmp_path, GOOD.replace("seed = 5", 'seed = 5\nrecords = "elsewhere"')))
    c = load(write(tmp_path, GOOD.replace("seed = 5", "seed = 6")))
    assert a.digest == b.digest != c.digest


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("games = 8", "games = 6"), r"cup.toml:2: games: 6 is not a multiple of 4"),
        (("games = 8", "games = 0"), r"cup.toml:2: games: must be 1..1,000,000 \(games per"),
        (
            ("games = 8", "games = 1000000000"),
            r"cup.toml:2: games: must be 1..1,000,000 \(games per variant\), got 1000000000",
        ),
        (
            ("seed = 5", "seed = 9223372036854775807"),
            r"cup.toml:3: seed: must be 0..9223372036854775799 \(2\*\*63-1 less the games",
        ),
        (("games = 8", 'games = "8"'), r"cup.toml:2: games: must be a whole number, got '8'"),
        (
            ("seed = 5", "sede = 5"),
            r"cup.toml:3: unknown key\(s\) 'sede' \(did you mean 'seed'\?\); known: ",
        ),
        # several: in the file's order, each at its own line with its near miss
        (
            ("seed = 5", "zzz = 1\nsede = 5"),
            r"cup.toml:3: unknown key\(s\) 'zzz'; line 4: 'sede' \(did you mean 'seed'\?\); known",
        ),
        (
            ('format = "round-robin"', 'format = "swiss"'),
            r"cup.toml:4: format: unknown format 'swiss'",
        ),
        (
            ("decision_ms = 2000", "decision_ms = 0"),
            r"cup.toml:7: \[clock\] decision_ms: must be 1..3600000 ms, got 0$",
        ),
        (  # the same bound said for a negative one (it said 0..3600000 then)
            ("decision_ms = 2000", "decision_ms = -5"),
            r"cup.toml:7: \[clock\] decision_ms: must be 1..3600000 ms, got -5$",
        ),
        (  # the file's own key at its own line, not the referee's name at the table's
            ("bank_ms = 0", "first_extra_ms = -1"),
            r"cup.toml:8: \[clock\] first_extra_ms: must be 0..3600000 ms, got -1$",
        ),
        (
            ("max_strikes = 2", "max_strikes = 0"),
            r"cup.toml:12: \[policies\] max_strikes: must be 1..1000, got 0$",
        ),
        (
            ("decision_ms = 2000", "decision = 2000"),
            r"cup.toml:7: \[clock\] decision: unknown key\(s\) decision \(did you mean "
            r"'decision_ms'\?\)",
        ),
        (
            ('on_timeout = "forfeit"', 'on_timeout = "pass"'),
            r"cup.toml:11: \[policies\] on_timeout",
        ),
        (
            ('ruleset = "medina-v1-2p"', 'ruleset = "chess"'),
            r"cup.toml:19: \[\[variants\]\] #2 ruleset: unknown ruleset 'chess'",
        ),
        (("players = 2", "players = 3"), r"\[\[variants\]\] #2 players: .*3"),
        (
            ('name = "c"', 'name = "greedy"'),
            r"cup.toml:32: \[\[bots\]\] #3 name: bot 'greedy' is named twice",
        ),
        (('name = "d"', 'name = "a b"'), r"\[\[bots\]\] #4 name: 'a b' is not a valid bot name"),
        (
            ('name = "d"', 'name = "-r5"'),
            r"#4 name: '-r5' is not a valid bot name: 1-64 ASCII letters, .*, starting with an "
            r"ASCII letter or digit$",
        ),
        (
            ('command = "python d.py"', 'command = "no-such-program-xyz --x"'),
            r"cup.toml:38: \[\[bots\]\] #4 command: program 'no-such-program-xyz' is not found",
        ),
        (
            ('command = "python d.py"', 'command = "./nosuchbot --x"'),
            r"#4 command: program './nosuchbot' is not found: no file .*/nosuchbot \(a relative "
            r"path is taken from the tournament file's directory \(the bot has no cwd\)\)",
        ),
        (
            ('command = "python c.py"', 'command = "bin/nosuchbot"'),
            r"#3 command: program 'bin/nosuchbot' is not found: .*from the bot's cwd\)",
        ),
        (('command = "python d.py"', "command = []"), r"\[\[bots\]\] #4 command: is empty"),
        (
            ('cwd = "."', 'cwd = "missing"'),
            r"cup.toml:34: \[\[bots\]\] #3 cwd: no such directory 'missing'",
        ),
        (
            ('env = { SEED = "1" }', "env = { SEED = 1 }"),
            r"\[\[bots\]\] #2 env: must be a table of strings",
        ),
        (('name = "cup"', 'name = ""'), r"cup.toml:1: name: '' is not a valid name"),
        # a misspelt table, a key typo inside a table: the line of the typo itself
        (
            ('[[bots]]\nname = "c"', '[[bot]]\nname = "c"'),
            r"cup.toml:31: unknown key\(s\) 'bot' \(did you mean 'bots'\?\)",
        ),
        (
            ('command = "python c.py"', 'comand = "python c.py"'),
            r"cup.toml:33: \[\[bots\]\] #3 comand: unknown key\(s\) comand \(did you mean "
            r"'command'\?\)",
        ),
        (("players = 4", "player = 4"), r"cup.toml:16: \[\[variants\]\] #1 player: unknown"),
        (("max_strikes = 2", "strikes = 2"), r"cup.toml:12: \[policies\] strikes: unknown"),
    ],
)
def test_mistakes_are_named(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    old, new = change
    assert old in GOOD
    with pytest.raises(TournamentConfigError, match=message):
        load(write(tmp_path, GOOD.replace(old, new, 1)))


def test_file_level_mistakes(tmp_path: Path) -> None:
    with pytest.raises(TournamentConfigError, match="no such tournament file"):
        load(tmp_path / "missing.toml")
    with pytest.raises(TournamentConfigError, match="not valid TOML"):
        load(write(tmp_path, "name = \n"))
    with pytest.raises(TournamentConfigError, match="no bots"):
        load(write(tmp_path, 'name = "x"\ngames = 4\n'))
    two = (
        GOOD.split("[[bots]]")[0]
        + '[[bots]]\nname = "a"\ncommand = "python a"\n[[bots]]\nname = "b"\ncommand = "python b"\n'
    )
    with pytest.raises(
        TournamentConfigError, match=r"cup.toml:22: bots: 4-player games need at least 4 bots"
    ):
        load(write(tmp_path, two))
    one = GOOD.split("[[bots]]")[0] + '[[bots]]\nname = "a"\ncommand = "python a"\n'
    with pytest.raises(
        TournamentConfigError, match=r"cup.toml:22: bots: a tournament needs at least 2 bots"
    ):
        load(write(tmp_path, one))
    gauntlet = GOOD.replace('format = "round-robin"', 'format = "gauntlet"')
    with pytest.raises(TournamentConfigError, match="a gauntlet needs candidates"):
        load(write(tmp_path, gauntlet))
    with pytest.raises(
        TournamentConfigError, match="at least 3 bots besides the candidates, there are 2"
    ):
        load(write(tmp_path, gauntlet.replace("seed = 5", 'seed = 5\ncandidates = ["c", "d"]')))
    with pytest.raises(TournamentConfigError, match="'zed' is not one of the bots"):
        load(write(tmp_path, gauntlet.replace("seed = 5", 'seed = 5\ncandidates = ["zed"]')))
    with pytest.raises(TournamentConfigError, match='candidates are for format = "gauntlet"'):
        load(write(tmp_path, GOOD.replace("seed = 5", 'seed = 5\ncandidates = ["c"]')))


#: GOOD's digest as medina-arena computed it before entry validation, sandboxes and SPRTs:
#: a tournament started then is continued now.
GOOD_DIGEST = "1ae092b49bcd0cc8"

SPRT = """\
name = "ab"
format = "sprt"
candidates = ["new"]
baseline = "old"
games = 100

[[variants]]
ruleset = "medina-v2"
players = 2

[sprt]
elo0 = 0
elo1 = 10

[[bots]]
name = "new"
command = "python new.py"

[[bots]]
name = "old"
command = "python old.py"
"""


def test_an_sprt_file(tmp_path: Path) -> None:
    cfg = load(write(tmp_path, SPRT))
    assert cfg.format == "sprt" and cfg.baseline == "old" and cfg.sprt is not None
    assert (cfg.sprt.elo0, cfg.sprt.elo1, cfg.sprt.alpha) == (0, 10, 0.05)
    assert TournamentConfig.from_json(cfg.to_json()) == cfg
    assert load(write(tmp_path, GOOD)).digest == GOOD_DIGEST  # other files hash as before


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('baseline = "old"', 'baseline = "new"'), r"cup.toml:4: baseline: the baseline must be"),
        (('baseline = "old"', ""), r"an SPRT needs the bot to test against"),
        (('candidates = ["new"]', 'candidates = ["new", "old"]'), r"tests one candidate"),
        (("games = 100", "games = 101"), r"cup.toml:5: games: 101 is not a multiple of 2"),
        (("elo1 = 10", "elo1 = -10"), r"cup.toml:13: \[sprt\] elo1: elo0 must be less"),
        (("elo1 = 10", "elo = 10"), r"\[sprt\] elo: unknown key"),
        (("players = 2", "players = 3"), r"a 3-player SPRT needs at least 2 bots besides"),
        (
            (
                '[[bots]]\nname = "old"',
                '[[bots]]\nname = "x"\ncommand = "python x"\n[[bots]]\nname = "old"',
            ),
            r"a 2-player SPRT plays the candidate against the baseline only",
        ),
    ],
)
def test_sprt_mistakes_are_named(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    old, new = change
    assert old in SPRT
    with pytest.raises(TournamentConfigError, match=message):
        load(write(tmp_path, SPRT.replace(old, new, 1)))


def test_differences_name_what_decides_the_games(tmp_path: Path) -> None:
    a = load(write(tmp_path, GOOD))
    assert a.differences(a.to_json()) == []
    b = load(
        write(
            tmp_path,
            GOOD.replace("seed = 5", 'seed = 6\nrecords = "elsewhere"')
            .replace('env = { SEED = "1" }', 'env = { SEED = "2" }')
            .replace("max_strikes = 2", "max_strikes = 3")
            .replace('name = "d"', 'name = "e"'),
        )
    )
    assert b.differences(a.to_json()) == [
        "bot 'random' (env)",
        "bot 'e' added",
        "bot 'd' removed",
        "policies",
        "seed",
    ]
