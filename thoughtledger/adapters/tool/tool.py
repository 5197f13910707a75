"""The in-process tool itself: one agent's sequential thinking over a ledger (see api.tool)."""

import asyncio
import copy
from collections.abc import Mapping, Sequence
from typing import Any

from thoughtledger.adapters.tool.arguments import parse_arguments
from thoughtledger.adapters.tool.schemas import DESCRIPTION, OUTPUT_SCHEMA, PARAMETERS, TOOL_NAME
from thoughtledger.api import Ledger, Principal, ThinkCommand, check_batch, checked_command
from thoughtledger.ledger.errors import InvalidInputError, InvalidThoughtError
from thoughtledger.ledger.ids import check_id
from thoughtledger.projections.answers import JsonDict, session_view


class SequentialThinkingTool:
    """The sequential-thinking tool over a ledger, for one agent (see :mod:`.adapters.tool`).

    Which session a call continues: the id bound at creation, when there is one (it wins over a
    ``sessionId`` argument, as in the session pattern); else the call's ``sessionId``; else the
    session this instance was last in; else a new one. After the call the instance is in the session
    the thought landed in, which is a new one after ``clearSession`` or an expiry, so a bound
    instance follows its work to the new id too. Calls on one instance run one at a time: a
    session is a sequence, and two first calls at once must not open two sessions.

    Args:
        ledger: Where thoughts are recorded.
        session_id: The session to bind (the caller owns it: a parent passes its own down, or an
            agent its stable id); ``None`` lets the first call start one.
        history_window: Keep only the last N thoughts in ``thoughtHistory`` (``None``: all, as
            the session pattern); ``thoughtHistoryLength`` counts every thought, and the ledger
            keeps them all.
        metadata: Facts recorded when a session starts here (``agent``, ``run``...).
        principal: The user it records for (see :func:`sequential_thinking_tool`).

    Raises:
        InvalidInputError: ``session_id`` is malformed or ``history_window`` is not a whole
            number of at least 1.
    """

    name: str = TOOL_NAME
    description: str = DESCRIPTION

    def __init__(
        self,
        ledger: Ledger,
        session_id: str | None = None,
        *,
        history_window: int | None = None,
        metadata: Mapping[str, str] | None = None,
        principal: Principal | None = None,
    ) -> None:
        if history_window is not None and (
            isinstance(history_window, bool)
            or not isinstance(history_window, int)
            or history_window < 1
        ):
            raise InvalidInputError(
                f"history_window must be a whole number of at least 1, got {history_window!r}"
            )
        self._ledger = ledger
        # The access door: a tool an application makes for one of its users records as that
        # principal, in its own sessions only; without one it is the ledger's own user's.
        self._scope = ledger.as_principal(principal)
        self._bound = session_id is not None
        self._session_id = check_id(session_id) if session_id is not None else None
        self._history_window = history_window
        self._metadata = {"tool": TOOL_NAME, "transport": "in-process", **(metadata or {})}
        self._turn = asyncio.Lock()

    @property
    def parameters(self) -> JsonDict:
        """The JSON Schema of the arguments (a fresh copy: callers may adapt it freely)."""
        return copy.deepcopy(PARAMETERS)

    @property
    def output_schema(self) -> JsonDict:
        """The JSON Schema of :meth:`execute`'s answer (a fresh copy)."""
        return copy.deepcopy(OUTPUT_SCHEMA)

    @property
    def session_id(self) -> str | None:
        """The session this instance is in: bound or last used; ``None`` before the first call."""
        return self._session_id

    async def execute(self, args: Mapping[str, Any] | str) -> JsonDict:
        """Record one thought and answer with the session pattern's view.

        Args:
            args: The tool call's arguments, as a mapping or as the JSON text a model sent.

        Returns:
            ``sessionId, thoughtNumber, totalThoughts, nextThoughtNeeded, thoughtHistory,
            branches, thoughtHistoryLength`` and, once no thought is needed, ``summary``.

        Raises:
            InvalidThoughtError: (a ``ValueError``) the arguments are not valid; the message
                names each camelCase field at fault, and nothing was recorded.
            AccessDeniedError: The tool's principal records nothing (a reader or an auditor).
            StoreError: The store failed; nothing was recorded.
        """
        given = parse_arguments(args)
        async with self._turn:
            target = self._session_id
            if not self._bound and given.session_id is not None:
                target = given.session_id
            if target is not None:
                target = await self._scope.writable(target)
            outcome = await self._scope.think(
                target,
                checked_command(
                    given.thought_fields(), max_thought_bytes=self._ledger.max_thought_bytes
                ),
                clear=bool(given.clear_session),
                metadata=self._metadata,
            )
            self._session_id = outcome.session_id
        return session_view(outcome.state, history_window=self._history_window)

    async def execute_batch(self, thoughts: Sequence[Mapping[str, Any] | str]) -> list[JsonDict]:
        """Record several thoughts in one append; answer each as :meth:`execute` would have.

        Each thought is one call's arguments (a mapping or JSON text) without ``sessionId`` or
        ``clearSession``: the batch continues the session this instance is in (or starts one).
        Every thought is validated first, as one call would be; then all are recorded in one
        store transaction.

        Raises:
            InvalidBatchError: (an ``InvalidThoughtError``) a thought is not valid; its
                ``index`` says which and the message which camelCase field; nothing was
                recorded.
            InvalidInputError: Not a list of 1 to ``MAX_BATCH_THOUGHTS`` thoughts.
            StoreError: The store failed; nothing was recorded.
        """
        limit = self._ledger.max_thought_bytes

        def validate(item: Mapping[str, Any] | str) -> ThinkCommand:
            given = parse_arguments(item)
            for own in ("session_id", "clear_session"):
                if getattr(given, own) is not None:
                    name = type(given).model_fields[own].alias
                    raise InvalidThoughtError(
                        f"invalid thought: {name}: not taken in a batch (it continues this "
                        "tool's session)"
                    )
            return checked_command(given.thought_fields(), max_thought_bytes=limit)

        commands = check_batch(thoughts, validate)
        async with self._turn:
            outcomes = await self._scope.think_batch(
                self._session_id, commands, metadata=self._metadata
            )
            self._session_id = outcomes[-1].session_id
        return [
            session_view(outcome.state, history_window=self._history_window) for outcome in outcomes
        ]

    def to_openai_chat(self) -> JsonDict:
        """The tool for OpenAI Chat Completions: ``{"type": "function", "function": {...}}``."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def to_openai_responses(self) -> JsonDict:
        """The tool for the OpenAI Responses API (flat, ``strict`` off).

        The Responses API makes function tools strict unless told otherwise, and strict mode
        wants every property required; the session pattern's optional properties are optional.
        """
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "strict": False,
        }

    def to_anthropic(self) -> JsonDict:
        """The tool for the Anthropic Messages API: ``{name, description, input_schema}``."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.parameters,
        }


def sequential_thinking_tool(
    ledger: Ledger,
    session_id: str | None = None,
    *,
    history_window: int | None = None,
    metadata: Mapping[str, str] | None = None,
    principal: Principal | None = None,
) -> SequentialThinkingTool:
    """Make a sequential-thinking tool for one agent.

    The session pattern's ``createSequentialThinkingTool``.

    Args:
        ledger: Where thoughts are recorded.
        session_id: A session to bind: it wins over any ``sessionId`` argument.
        history_window: Keep only the last N thoughts in each answer's ``thoughtHistory``.
        metadata: Facts recorded when a session starts through this tool.
        principal: The user the tool records for: its own sessions only (a session of another
            named by the model is that user's own, under a derived id); ``None``: the ledger's
            own user, who may record anywhere.

    Returns:
        A new tool, sharing nothing with any other but the ledger.

    Raises:
        InvalidInputError: ``session_id`` is malformed or ``history_window`` is below 1.
    """
    return SequentialThinkingTool(
        ledger, session_id, history_window=history_window, metadata=metadata, principal=principal
    )


__all__ = ["SequentialThinkingTool", "sequential_thinking_tool"]
