"""What ``thoughtledger record`` reads: JSON Lines of thought calls, one batch per session.

Each line is one call's arguments in the MCP shape (``sequentialthinking``'s thought fields,
camelCase, read with the MCP tools' types), optionally with ``sessionId`` and with ``_meta``
naming the session's agent and client as an MCP call's does (``thoughtledger/agent``,
``thoughtledger/client``):

* lines naming a session form that session's batch, wherever they are in the file, in file order;
* lines naming none form runs: lines that follow one another, a new run at each thought numbered
  1 (or after a line that names a session); each run becomes a new session.

A line that breaks a rule refuses its own batch only (it is kept with the batch, with the line
number and the field, and nothing of that session is written). A line whose batch cannot be told
(too long, not JSON, not an object, a malformed ``sessionId``), or a file over the bounds, refuses
the whole file before anything is written.
"""

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from pydantic import ValidationError

from thoughtledger.adapters.cli.common import UsageError
from thoughtledger.adapters.mcp.stdio.limits import MAX_MESSAGE_BYTES as MAX_LINE_BYTES
from thoughtledger.adapters.mcp.tools.batch_item import BatchThought
from thoughtledger.adapters.mcp.tools.lax_types import plain_wording
from thoughtledger.adapters.mcp.tools.parameters import thought_fields
from thoughtledger.api import (
    AGENT_META_KEY,
    MAX_BATCH_THOUGHTS,
    InvalidBatchError,
    ThinkCommand,
    check_agent,
    check_batch,
    checked_command,
)
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.thought_types import describe_errors

CLIENT_META_KEY = "thoughtledger/client"
"""The key of a line's ``_meta`` naming its client (an MCP call's client is its connection's)."""
META_KEYS = {AGENT_META_KEY: "agent", CLIENT_META_KEY: "client"}
"""What a line's ``_meta`` may name, as an MCP call's does: the session's agent and client."""
MAX_RECORD_LINES = 100 * MAX_BATCH_THOUGHTS
"""Most thought lines one file may hold (a longer file is refused whole: split it)."""
MAX_RECORD_BYTES = 64 * MAX_LINE_BYTES
"""Most bytes one file may hold (read into memory before anything is written)."""


@dataclass
class Batch:
    """The lines of one session, to be recorded in one append, or refused whole.

    Attributes:
        session_id: The session the lines name; ``None`` for a run (a new session).
        lines: Each thought's line number, in order.
        fields: Each thought's fields, snake_case, as the types read them.
        refusal: Why the batch is refused (the first bad line, its number and field).
    """

    session_id: str | None
    lines: list[int] = field(default_factory=list)
    fields: list[dict[str, Any]] = field(default_factory=list)
    refusal: str | None = None
    named: dict[str, tuple[str, int]] = field(default_factory=dict)

    def name(self, line: int, meta: object) -> None:
        """Take the agent and client a line's ``_meta`` names; refuse the batch on a conflict.

        A session has one agent and one client: the first line naming one sets it, and a line
        naming another refuses the batch.
        """
        if meta is None:
            return
        if not isinstance(meta, dict):
            self.refuse(line, f"_meta: must be an object, got {type(meta).__name__}")
            return
        for key, fact in META_KEYS.items():
            given = meta.get(key)
            if given is None:
                continue
            try:
                value = check_name(given, fact)
            except InvalidInputError as exc:
                self.refuse(line, f"_meta: {key}: {exc}")
                return
            before = self.named.setdefault(fact, (value, line))
            if before[0] != value:
                self.refuse(
                    line, f"_meta: {key} {value!r} differs from {before[0]!r} on line {before[1]}"
                )

    def absorb(self, other: "Batch") -> None:
        """Take ``other``'s lines (named as the same session), keeping file order."""
        rows = sorted(zip([*self.lines, *other.lines], [*self.fields, *other.fields], strict=True))
        self.lines = [line for line, _fields in rows]
        self.fields = [fields for _line, fields in rows]
        for fact, (value, line) in other.named.items():
            before = self.named.setdefault(fact, (value, line))
            if before[0] != value:
                self.refuse(line, f"_meta: the {fact} {value!r} differs from {before[0]!r}")
        if other.refusal is not None:
            self.refusal = self.refusal or other.refusal

    @property
    def facts(self) -> dict[str, str]:
        """The agent and client the batch's lines named (to record if it starts a session)."""
        return {fact: value for fact, (value, _line) in self.named.items()}

    def refuse(self, line: int, reason: str) -> None:
        """Refuse the batch for ``reason`` at ``line``, unless an earlier line already did."""
        if self.refusal is None:
            self.refusal = f"line {line}: {reason}"

    def commands(self, max_thought_bytes: int) -> list[ThinkCommand]:
        """Each thought checked by the rules of one call; the batch is refused if one breaks one.

        Returns:
            The commands, or nothing when the batch is refused (``refusal`` says why).
        """
        if self.refusal is not None:
            return []
        if len(self.lines) > MAX_BATCH_THOUGHTS:
            self.refusal = (
                f"lines {self.lines[0]}-{self.lines[-1]}: {len(self.lines)} thoughts for one "
                f"session, over the {MAX_BATCH_THOUGHTS} one batch records; split the session"
            )
            return []
        try:
            return check_batch(
                self.fields,
                lambda given: checked_command(given, max_thought_bytes=max_thought_bytes),
            )
        except InvalidBatchError as exc:
            self.refuse(self.lines[exc.index], exc.reason)
            return []


def read_batches(stream: BinaryIO, name: str) -> list[Batch]:
    """Read every line of ``stream`` into batches, one a session, in the order they begin.

    Raises:
        UsageError: A line is too long, not a JSON object, or names a malformed session, or
            the file is over :data:`MAX_RECORD_LINES` or :data:`MAX_RECORD_BYTES`; nothing
            is to be recorded.
    """
    named: dict[str, Batch] = {}
    batches: list[Batch] = []
    run: Batch | None = None
    for number, call in _calls(stream, name):
        given = call.pop("sessionId", None)
        meta = call.pop("_meta", None)
        problem: str | None = None
        try:
            fields = thought_fields(dict(BatchThought.model_validate(call)))
        except ValidationError as exc:
            fields, problem = {}, describe_errors(exc, plain_wording)
        if given is not None:
            session_id = _session(given, name, number)
            batch = named.get(session_id)
            if batch is None:
                batch = named[session_id] = Batch(session_id)
                batches.append(batch)
            run = None  # the next unnamed line does not follow this run's last line
        else:
            first = fields.get("thought_number", call.get("thoughtNumber")) in (1, "1")
            if run is None or first:
                run = Batch(None)
                batches.append(run)
            batch = run
        batch.lines.append(number)
        batch.fields.append(fields)
        batch.name(number, meta)
        if problem is not None:
            batch.refuse(number, problem)
    return batches


def check_name(given: object, fact: str) -> str:
    """``given`` if it can name an agent or a client (the rules of an agent's name).

    Raises:
        InvalidInputError: It cannot: not a string, empty, over 100 characters, or holding a
            control character.
    """
    try:
        return check_agent(given)
    except InvalidInputError as exc:
        if fact == "agent":
            raise
        raise InvalidInputError(str(exc).replace("an agent's name", f"a {fact}'s name")) from None


def _calls(stream: BinaryIO, name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each non-blank line's JSON object, with its line number.

    Raises:
        UsageError: A line too long or not a JSON object, or a file over the bounds.
    """
    read = thoughts = 0
    for number in itertools.count(1):
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        read += len(raw)
        if len(raw) > MAX_LINE_BYTES:
            raise UsageError(
                f"{name}:{number}: line is over {MAX_LINE_BYTES} bytes, more than one call "
                "takes; nothing was recorded"
            )
        if read > MAX_RECORD_BYTES:
            raise UsageError(
                f"{name}: over {MAX_RECORD_BYTES} bytes; split it into several files; nothing "
                "was recorded"
            )
        if not raw.strip():
            continue
        thoughts += 1
        if thoughts > MAX_RECORD_LINES:
            raise UsageError(
                f"{name}: over {MAX_RECORD_LINES} thoughts; split it into several files; "
                "nothing was recorded"
            )
        try:
            value = json.loads(raw)
        except ValueError as exc:  # JSONDecodeError, or bytes that are not UTF-8
            raise UsageError(
                f"{name}:{number}: not JSON ({exc}); its session cannot be told, so nothing was "
                "recorded"
            ) from None
        if not isinstance(value, dict):
            raise UsageError(
                f"{name}:{number}: not a JSON object of a thought call; its session cannot be "
                "told, so nothing was recorded"
            )
        yield number, value


def _session(given: object, name: str, number: int) -> str:
    if not isinstance(given, str):
        raise UsageError(
            f"{name}:{number}: sessionId must be a string; its session cannot be told, so "
            "nothing was recorded"
        )
    try:
        return check_id(given)
    except InvalidInputError as exc:
        raise UsageError(
            f"{name}:{number}: sessionId: {exc}; its session cannot be told, so nothing was "
            "recorded"
        ) from None


__all__ = [
    "CLIENT_META_KEY",
    "MAX_RECORD_BYTES",
    "MAX_RECORD_LINES",
    "META_KEYS",
    "Batch",
    "check_name",
    "read_batches",
]
