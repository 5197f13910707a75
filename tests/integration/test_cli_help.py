"""Every command's ``--help``, as a person reads it: the options commands share, named alike.

Each command's help is read from a real process. The options commands share (``--db``,
``--read-url``, ``--json``) come last, in one group, in that order, each with the same words
everywhere (``demo``'s ``--db`` says where it records, which is its own meaning); an OAuth
issuer's options (``--auth-issuer`` and those that go with it) come together, in one order,
with the same words in every command that takes them (``serve``, ``ui``, ``receive``); the session
filters (``--since``, ``--until``, ``--agent``, ``--client``) come in that order wherever they
are; ``--agent`` picks sessions where a command reads and names who records where it writes.
"""

import re
import subprocess
import sys
from functools import cache

import pytest

from tests.support.processes import ROOT, WAIT, child_env
from thoughtledger.adapters.cli.common import (
    AGENT_FILTER_HELP,
    DB_HELP,
    JSON_HELP,
    READ_URL_HELP,
    SHARED_TITLE,
)
from thoughtledger.adapters.common.options import ISSUER_OPTIONS

SHARED = ["--db", "--read-url", "--json", "--csv"]
"""The shared options, in the order every help lists them (``--csv`` goes with ``--json``)."""
FILTERS = ["--since", "--until", "--agent", "--client"]
WRITE_ONLY = {"record", "import"}
"""Commands that only write: no standby to read from."""
RECORDING = {"record", "fork"}
"""Commands whose ``--agent`` names who records."""
ISSUER_COMMANDS = {"receive", "ui", "serve"}
"""Commands that accept an OAuth issuer's tokens."""


@cache
def help_of(*command: str) -> str:
    done = subprocess.run(  # noqa: S603  # our interpreter, our module
        [sys.executable, "-m", "thoughtledger", *command, "--help"],
        cwd=ROOT,
        env=child_env(COLUMNS="100"),
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, ""), command
    return done.stdout


def listed_commands() -> list[str]:
    """The commands ``thoughtledger --help`` lists, in its order."""
    text = help_of()
    block = text.split("COMMAND\n", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^    (\S+)", block, re.MULTILINE)


COMMANDS = [
    *[name for name in listed_commands() if name not in ("token", "serve")],
    "token add",
    "token list",
    "token revoke",
]


def sections(text: str) -> dict[str, dict[str, str]]:
    """Each section of a help (``options:``...) as its options and their words, in order."""
    found: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    option = None
    for line in text.splitlines():
        if re.fullmatch(r"[a-z ]+:", line):
            current = found.setdefault(line[:-1], {})
            continue
        if current is None:
            continue
        named = re.match(r"  (-\S+(?:, --\S+)?)(?: [A-Z]\S*)?(?:\s{2,}(.*))?$", line)
        if named:
            option = named.group(1).split(", ")[-1]
            current[option] = named.group(2) or ""
        elif option is not None and line.startswith("    "):
            current[option] = f"{current[option]} {line.strip()}".strip()
    return found


def test_the_command_list_is_in_order_of_name() -> None:
    names = listed_commands()
    assert names == sorted(names)
    assert {"doctor", "sessions", "show", "serve"} <= set(names)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_commands_shared_options_come_last_in_one_order_and_the_same_words(
    command: str,
) -> None:
    text = help_of(*command.split())
    parts = sections(text)
    shared = parts.get(SHARED_TITLE, {})
    if shared:
        assert list(parts)[-1] == SHARED_TITLE, command
    assert list(shared) == [name for name in SHARED if name in shared], command
    for section, options in parts.items():
        if section != SHARED_TITLE:  # never elsewhere
            assert not set(SHARED) & set(options), (command, section)
    words = {"--db": DB_HELP, "--read-url": READ_URL_HELP, "--json": JSON_HELP}
    for name, said in shared.items():
        if name in words and not (command == "demo" and name == "--db"):
            assert said == words[name], (command, name)
    assert len(re.findall(r"\n  --db", text)) <= 1
    if "--db" in shared:
        db_lines = text.split("\n  --db", 1)[1].split("\n  -", 1)[0].count("\n")
        assert db_lines <= 3, command  # not seven lines of it in every help
    if command in WRITE_ONLY:
        assert "--read-url" not in text
    elif "--db" in shared and command != "demo":
        assert "--read-url" in shared, command
    issuer_options_alike(command, parts)


def issuer_options_alike(command: str, parts: dict[str, dict[str, str]]) -> None:
    """The issuer's options: all or none, together, in one order, with the same words."""
    issuer = list(ISSUER_OPTIONS)
    for options in parts.values():
        names = list(options)
        if not set(issuer) & set(names):
            continue
        at = names.index(issuer[0])
        assert names[at : at + len(issuer)] == issuer, command
        assert {name: options[name] for name in issuer} == ISSUER_OPTIONS, command
        assert command in ISSUER_COMMANDS, command
        return
    assert command not in ISSUER_COMMANDS, command


@pytest.mark.parametrize("command", COMMANDS)
def test_the_session_filters_come_in_one_order_and_agent_says_what_it_does(command: str) -> None:
    options = [name for part in sections(help_of(*command.split())).values() for name in part]
    filters = [name for name in options if name in FILTERS]
    assert filters == [name for name in FILTERS if name in filters], command
    agent = next(
        (
            part["--agent"]
            for part in sections(help_of(*command.split())).values()
            if "--agent" in part
        ),
        None,
    )
    if agent is None:
        return
    if command in RECORDING:
        assert agent.startswith("record "), (command, agent)
    else:
        assert agent == AGENT_FILTER_HELP, (command, agent)


def test_serve_lists_the_ledger_options_first_in_the_same_order() -> None:
    parts = sections(help_of("serve"))
    assert list(parts["options"])[:3] == ["--help", "--db", "--read-url"]
    issuer_options_alike("serve", parts)
