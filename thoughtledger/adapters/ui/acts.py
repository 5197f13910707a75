"""What a person does from the browser view: annotate a thought, fork a session, redact a thought.

Each act is a ``POST`` under ``/api/sessions/ID/...`` with a JSON body, done through the
facade's access door (:meth:`thoughtledger.api.Ledger.as_principal`): the same events, and the
same rules, as ``thoughtledger annotate``, ``fork`` and ``redact``. A writer annotates, forks and
redacts its own sessions; an auditor annotates and redacts every session and forks none; a
reader does none of it. A refused role is answered 403 with the words of the door.

An act is guarded against another site's page riding the browser's sign-in (cross-site request
forgery), on top of the sign-in cookie being ``SameSite=Strict``:

- the body must be JSON (a page elsewhere cannot send JSON without the browser asking this app
  first, and this app never answers such a question);
- a request without ``Authorization`` (a browser's) must carry ``Origin``, which
  :class:`~thoughtledger.adapters.ui.guards.SameOrigin` has already found to be the app's own,
  and a ``Sec-Fetch-Site`` that is ``same-origin`` where the browser sends one.

A script with a bearer token carries no cookie to ride, so it needs neither header.
"""

import json
import math
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request

from thoughtledger.api import AccessDeniedError, Scope, default_author
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.events import MAX_LABEL_CHARS, MAX_NOTE_CHARS, MAX_REASON_CHARS

ACT_BODY_MAX = 64 * 1024
"""The most bytes an act's body may hold (a note of the longest kind, escaped, fits)."""

READ_ONLY_REFUSAL = (
    "this view was started with --read-only: it shows the ledger and changes nothing"
)

JsonDict = dict[str, Any]


class ForgedRequestError(AccessDeniedError):
    """An act that does not come from one of the app's own pages (answered 403)."""


def check_same_site(request: Request) -> None:
    """Refuse an act a page of another site could have sent on the user's behalf.

    Raises:
        ForgedRequestError: A browser's request without its ``Origin``, or one its browser says
            came from another site.
    """
    if request.headers.get("authorization") is not None:
        return  # a script's own token: no browser cookie rides along
    site = request.headers.get("sec-fetch-site")
    if site is not None and site != "same-origin":
        raise ForgedRequestError(f"an act must come from this app's own pages, not {site[:20]!a}")
    if request.headers.get("origin") is None:
        raise ForgedRequestError(
            "an act from a browser carries its Origin (send Authorization: Bearer from a script)"
        )


async def read_body(request: Request) -> JsonDict:
    """The act's JSON object, bounded.

    Raises:
        InvalidInputError: Not JSON, not an object, or larger than :data:`ACT_BODY_MAX`.
    """
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise InvalidInputError("send the act as JSON (Content-Type: application/json)")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > ACT_BODY_MAX:
            raise InvalidInputError(f"an act is at most {ACT_BODY_MAX} bytes")
    try:
        found = json.loads(body or b"{}")
    except ValueError:
        raise InvalidInputError("the act's body is not JSON") from None
    if not isinstance(found, dict):
        raise InvalidInputError("the act's body is a JSON object")
    return found


def _whole(body: JsonDict, name: str, *, required: bool) -> int | None:
    value = body.get(name)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"{name} must be a whole number of 1 or more, not {value!r:.40}")
    return value


def _words(body: JsonDict, name: str, most: int, *, required: bool) -> str | None:
    value = body.get(name)
    if value is None or value == "":
        if required:
            raise InvalidInputError(f"{name} is required")
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{name} must be text")
    if len(value) > most:
        raise InvalidInputError(f"{name} has at most {most:,} characters, not {len(value):,}")
    return value


def _score(body: JsonDict) -> float | None:
    value = body.get("score")
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInputError(f"score must be a number, not {value!r:.40}")
    return float(value)


Act = Callable[[Scope, str, JsonDict], Awaitable[JsonDict]]


async def annotate(scope: Scope, session_id: str, body: JsonDict) -> JsonDict:
    """``{"thought": N, "label": L, "score": S?, "note": T?}``: annotate thought N.

    Raises:
        AccessDeniedError: The role annotates nothing.
        SessionNotFoundError: No such session this principal may annotate.
        InvalidInputError: A malformed field or a thought the session does not have.
        LedgerError: The ledger failed.
    """
    number = _whole(body, "thought", required=True)
    assert number is not None  # noqa: S101  # required above
    label = _words(body, "label", MAX_LABEL_CHARS, required=True)
    assert label is not None  # noqa: S101  # required above
    made = await scope.annotate(
        session_id,
        number,
        label=label,
        note=_words(body, "note", MAX_NOTE_CHARS, required=False),
        score=_score(body),
        by=default_author(),
    )
    return {
        "sessionId": await scope.find(session_id),
        "version": made.version,
        "thoughtNumber": made.thought_number,
        "label": made.label,
        "score": made.score,
        "note": made.note or None,
        "by": made.by,
    }


async def fork(scope: Scope, session_id: str, body: JsonDict) -> JsonDict:
    """``{"at": V?}``: a new session continuing this one as it was at version V (default: now).

    Raises:
        AccessDeniedError: The role forks nothing.
        SessionNotFoundError: No such session this principal may fork.
        InvalidInputError: A version the session does not have.
        LedgerError: The ledger failed.
    """
    made = await scope.fork(session_id, at_version=_whole(body, "at", required=False))
    state = await made.state()
    point = state.fork
    assert point is not None  # noqa: S101  # a fork's first event names its source
    return {
        "sessionId": state.session_id,
        "forkOf": point.session_id,
        "forkVersion": point.version,
        "thoughtCount": state.thought_count,
        "href": f"/sessions/{state.session_id}",
    }


async def redact(scope: Scope, session_id: str, body: JsonDict) -> JsonDict:
    """``{"thought": N} or {"version": V}, "reason": R``: remove that thought's text.

    Raises:
        AccessDeniedError: The role redacts nothing.
        SessionNotFoundError: No such session this principal may redact.
        InvalidInputError: No reason, both or neither of thought and version, or one the
            session does not have.
        LedgerError: The ledger failed.
    """
    number = _whole(body, "thought", required=False)
    version = _whole(body, "version", required=False)
    if (number is None) == (version is None):
        raise InvalidInputError("name the thought (its number) or the version to redact")
    reason = _words(body, "reason", MAX_REASON_CHARS, required=True)
    assert reason is not None  # noqa: S101  # required above
    report = await scope.redact(
        session_id, thought_number=number, version=version, reason=reason, by=default_author()
    )
    return {
        "sessionId": report.session_id,
        "redacted": [
            {"version": item.version, "thoughtNumber": item.thought_number}
            for item in report.redacted
        ],
        "refused": [item.version for item in report.refused],
    }


ACTS: dict[str, Act] = {"annotate": annotate, "fork": fork, "redact": redact}
"""Each act by the last part of its address (``/api/sessions/ID/annotate``...)."""


__all__ = [
    "ACTS",
    "ACT_BODY_MAX",
    "READ_ONLY_REFUSAL",
    "ForgedRequestError",
    "annotate",
    "check_same_site",
    "fork",
    "read_body",
    "redact",
]
