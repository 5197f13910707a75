"""Every command's name, one-line summary and module: the command list without its code.

The ``thoughtledger`` command loads only the module of the command typed (``show`` loads
``show``, never ``export`` or the MCP server), and ``thoughtledger --help`` loads none: the list
it prints comes from here. Each command module adds its command with the summary it finds here,
so the list and the command's own help say the same words.
"""

from typing import NamedTuple

PACKAGE = "thoughtledger.adapters.cli"


class Entry(NamedTuple):
    """One command: the module that adds and runs it, and its summary."""

    module: str
    summary: str


CATALOGUE: dict[str, Entry] = {
    "annotate": Entry(
        "annotate",
        "annotate a thought with a label, and optionally a score and a note "
        "(a reviewer's finding, kept in the ledger)",
    ),
    "checkpoint": Entry("proofs", "sign a checkpoint of the ledger (keep it outside the database)"),
    "consistency": Entry(
        "proofs",
        "prove the log only grew between two checkpoints (nothing before the older rewritten)",
    ),
    "demo": Entry("demo", "record a sample session and show it"),
    "diff": Entry("diff", "show what changed in a session between two versions"),
    "doctor": Entry(
        "doctor",
        "say which ledger the commands use, its size and schema, the extras installed and the "
        "servers serve and ui would start",
    ),
    "export": Entry("export", "write sessions to a JSON Lines file, hashes included"),
    "fork": Entry(
        "fork",
        "start a new session that continues another as it was at a version "
        "(the source is untouched)",
    ),
    "import": Entry(
        "importing",
        "load an export file; a tampered, cut-short or conflicting one changes nothing",
    ),
    "keygen": Entry("proofs", "make an Ed25519 key pair that signs checkpoints"),
    "prove": Entry("proofs", "write a proof that a thought is in a signed checkpoint"),
    "receive": Entry(
        "receive",
        "take in agents' reasoning from OpenTelemetry GenAI spans (an OTLP/HTTP receiver)",
    ),
    "record": Entry(
        "record",
        "record thought calls from JSON Lines (- reads stdin), each session in one transaction",
    ),
    "redact": Entry(
        "redact",
        "remove a thought's text (a pasted secret, personal data), recording who and why; "
        "every chain and proof still verifies",
    ),
    "replay": Entry("replay", "step through a session event by event"),
    "search": Entry("search", "find thoughts of every session by their words"),
    "serve": Entry(
        "serve", "run the MCP server for your agents (stdio; --http for streamable HTTP)"
    ),
    "sessions": Entry("sessions", "list sessions, most recently active first"),
    "show": Entry("show", "show a session as a tree of its thoughts"),
    "stats": Entry("stats", "analytics over all sessions: rates, percentiles"),
    "token": Entry("token", "manage the bearer tokens of serve --http --auth (add, list, revoke)"),
    "ui": Entry(
        "ui", "sessions in your browser: tree, time travel, live, analytics; annotate, fork, redact"
    ),
    "verify": Entry("verify", "check that no recorded event was edited, removed or reordered"),
    "verify-proof": Entry(
        "proofs", "check a proof bundle with the public key alone (no ledger needed)"
    ),
}
"""Every command by name (``import`` lives in ``importing``: ``import`` is a keyword)."""


def summary(name: str) -> str:
    """The one-line summary of command ``name`` (the command list and its help both show it)."""
    return CATALOGUE[name].summary


def module_of(name: str) -> str:
    """The full name of the module that adds and runs command ``name``."""
    return f"{PACKAGE}.{CATALOGUE[name].module}"


__all__ = ["CATALOGUE", "PACKAGE", "Entry", "module_of", "summary"]
