"""A model's thought streamed to the MCP client as progress notifications while it is written.

A client asks for progress by sending a progress token with its call (``_meta.progressToken``;
the SDK's ``call_tool(..., progress_callback=...)`` sends one, or, in process, hands its callback
over directly). ``sequential_thinking_external``
then asks the model with ``stream: true`` and sends each piece of the thought as it arrives, in
a ``notifications/progress`` whose ``message`` is the piece and whose ``progress`` counts the
characters sent so far (no ``total``: nobody knows the length in advance). The thought is then
recorded once, whole, and the call answers as it would have without streaming; the messages add
up to the answer's ``thought_content``.

Without a token nothing changes: the model is asked without ``stream`` and the call waits for
the whole answer, so a client that shows no progress pays nothing for it.

A call cancelled while the thought is being written (``notifications/cancelled``, a 2026-07-28
HTTP client that goes away, which the server sees as the end of the request, or a stdio client
that closes its end of the answers) records nothing: the thought is recorded only after its last
piece was sent. A handshake-era HTTP session outlives a dropped response stream (the client may
resume it): there only ``notifications/cancelled`` abandons the call.
"""

import contextlib
from collections.abc import Mapping
from typing import Protocol

from mcp.server.mcpserver.exceptions import ToolError

from thoughtledger.adapters.mcp.sdk_private import in_process_progress
from thoughtledger.adapters.mcp.stdio.pipes import reader_gone
from thoughtledger.adapters.mcp.tools.context import AppContext
from thoughtledger.api import (
    Ledger,
    ThinkCommand,
    ThinkOutcome,
    ThoughtWriter,
    stream_with_writer,
)

_TOKEN_KEYS = ("progress_token", "progressToken")
CLIENT_GONE = "the client stopped reading while the thought was written; nothing was recorded"


class ExternalThinking(Protocol):
    """How the tool has a model's thought: :func:`thoughtledger.api.think_with_writer`'s shape."""

    async def __call__(
        self,
        ledger: Ledger,
        session_id: str | None,
        arguments: ThinkCommand,
        *,
        writer: ThoughtWriter | None,
        model: str | None,
        temperature: float | None,
        clear: bool,
        metadata: Mapping[str, str] | None,
        owner: str | None,
    ) -> ThinkOutcome:
        """Record the model's thought and return the outcome."""
        ...


def progress_requested(ctx: AppContext) -> bool:
    """Whether the call carries a progress token (the SDK reads it as ``progress_token``).

    An in-process client of the 2026-07-28 era hands its callback over without a token; that
    counts too (:func:`~thoughtledger.adapters.mcp.sdk_private.in_process_progress`).
    """
    request = ctx.request_context
    meta = request.meta
    if isinstance(meta, Mapping) and any(meta.get(key) is not None for key in _TOKEN_KEYS):
        return True
    return request.request is None and in_process_progress(request)


def think_streaming(ctx: AppContext) -> ExternalThinking:
    """:func:`thoughtledger.api.think_with_writer` for ``ctx``'s call, with the thought as progress.

    The function returned takes :func:`~thoughtledger.api.stream_with_writer`'s arguments,
    sends each piece as it arrives and returns the outcome once the thought is recorded.
    """

    async def think(
        ledger: Ledger,
        session_id: str | None,
        arguments: ThinkCommand,
        *,
        writer: ThoughtWriter | None,
        model: str | None,
        temperature: float | None,
        clear: bool,
        metadata: Mapping[str, str] | None,
        owner: str | None,
    ) -> ThinkOutcome:
        sent = 0
        outcome: ThinkOutcome | None = None
        items = stream_with_writer(
            ledger,
            session_id,
            arguments,
            writer=writer,
            model=model,
            temperature=temperature,
            clear=clear,
            metadata=metadata,
            owner=owner,
        )
        async with contextlib.aclosing(items):
            async for item in items:
                if isinstance(item, str):
                    sent += len(item)
                    await ctx.report_progress(sent, None, item)
                    if reader_gone():
                        # A stdio client that closed its end will read no answer: stop here,
                        # before anything is recorded (closing the stream closes the request).
                        raise ToolError(CLIENT_GONE)
                else:
                    outcome = item
        if outcome is None:  # pragma: no cover - the use case always ends with the outcome
            raise RuntimeError("the stream ended without recording the thought")
        return outcome

    return think


__all__ = ["CLIENT_GONE", "ExternalThinking", "progress_requested", "think_streaming"]
