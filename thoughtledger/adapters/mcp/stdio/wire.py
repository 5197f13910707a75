r"""Lines on the stdio wire that the SDK's parser refuses, and answers it could not encode.

* A line that is no JSON, or no JSON-RPC message, gets :func:`error_reply`: ``-32700 Parse
  error`` or ``-32600 Invalid Request`` (with the request's id when one can be read). So does a
  line refused before parsing (too long, or not UTF-8): ``-32700``, saying why.
* ``"a\ud800b"`` is valid JSON, but the SDK's parser refuses a lone surrogate escape;
  :func:`reparsed` reads such a line with the standard library instead. In a tool call's arguments
  the surrogate is kept, so the tool refuses it naming the argument (see
  :data:`thoughtledger.adapters.mcp.tools.lax_types.LaxText`); anywhere else (a client's name, a
  tool's name) it is spelled out as its escape, so the message is served and nothing unencodable
  reaches the ledger.
* An answer that still holds one is sent with it spelled out (:func:`encodable`).
"""

import json
import re
from typing import Any

import mcp.types as mcp_types
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from thoughtledger.adapters.mcp.stdio.framing import UnreadableLineError

# A \u escape of a surrogate: the one thing valid JSON may hold that the SDK's parser refuses.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def error_reply(error: Exception) -> SessionMessage | None:
    """The JSON-RPC error answering a line that did not parse; ``None`` for a blank line.

    Malformed JSON gets ``-32700 Parse error``, and so does a line refused before parsing (over
    :data:`thoughtledger.adapters.mcp.stdio.framing.MAX_LINE_BYTES`, or not UTF-8), with the reason;
    JSON that is no JSON-RPC message gets ``-32600 Invalid Request``. Each carries the request's
    ``id`` when one can be read, else ``null``.
    """
    code, message, request_id = INVALID_REQUEST, "Invalid Request", None
    if isinstance(error, UnreadableLineError):
        code, message, request_id = PARSE_ERROR, f"Parse error: {error}", error.request_id
    elif isinstance(error, ValidationError):
        problems = error.errors(include_url=False)
        invalid_json = [p for p in problems if p["type"] == "json_invalid"]
        if invalid_json:
            line = invalid_json[0].get("input")
            if isinstance(line, str) and not line.strip():
                return None  # a blank line between messages is no request at all
            code, message = PARSE_ERROR, "Parse error"
        else:
            request_id = _request_id(problem["input"] for problem in problems)
    rpc_error = JSONRPCError(
        jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message)
    )
    return SessionMessage(rpc_error)


def _request_id(inputs: Any) -> int | str | None:
    for value in inputs:
        if isinstance(value, dict):
            candidate = value.get("id")
            if isinstance(candidate, str) or (
                isinstance(candidate, int) and not isinstance(candidate, bool)
            ):
                return candidate
    return None


def reparsed(error: Exception) -> SessionMessage | Exception:
    """The message of a line refused only for a lone surrogate escape, else an exception.

    Returns:
        The message; or, for JSON that is no JSON-RPC message, the validation error to answer;
        or ``error`` itself when the line is not of that kind.
    """
    data = _with_lone_surrogates(error)
    if data is None:
        return error
    try:
        message = mcp_types.jsonrpc_message_adapter.validate_python(
            _spelled_out_but_arguments(data), by_name=False
        )
    except ValidationError as invalid:
        return invalid
    return SessionMessage(message)


def _with_lone_surrogates(error: Exception) -> Any:
    """The JSON of a line the SDK refused only for a surrogate escape; ``None`` otherwise."""
    if not isinstance(error, ValidationError):
        return None
    lines = [p.get("input") for p in error.errors(include_url=False) if p["type"] == "json_invalid"]
    line = lines[0] if lines else None
    if not isinstance(line, str) or _SURROGATE_ESCAPE.search(line) is None:
        return None
    try:
        # The standard library takes lone surrogates; it also takes NaN and Infinity, which
        # JSON does not, so those stay parse errors.
        return json.loads(line, parse_constant=_not_json)
    except (ValueError, RecursionError):
        return None


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def encodable(item: SessionMessage) -> SessionMessage:
    r"""``item`` as is if it encodes as UTF-8, else with each lone surrogate spelled ``\udxxx``."""
    try:
        item.message.model_dump_json(by_alias=True, exclude_unset=True)
    except PydanticSerializationError:
        data = item.message.model_dump(mode="json", by_alias=True, exclude_unset=True)
        message = mcp_types.jsonrpc_message_adapter.validate_python(
            _spelled_out(data), by_name=False
        )
        return SessionMessage(message, metadata=item.metadata)
    return item


def _spelled_out_but_arguments(data: Any) -> Any:
    """``data`` with lone surrogates spelled out, except in a tool call's arguments.

    The tool names the argument that holds one and refuses the call; anywhere else (a client's
    name, a tool's name) the text is kept as its escape, so the message is still served and
    nothing unencodable reaches the ledger.
    """
    params = data.get("params") if isinstance(data, dict) else None
    if not isinstance(params, dict) or "arguments" not in params:
        return _spelled_out(data)
    arguments = params["arguments"]
    spelled = _spelled_out({**data, "params": {**params, "arguments": None}})
    spelled["params"]["arguments"] = arguments
    return spelled


def _spelled_out(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_spelled_out(key): _spelled_out(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_spelled_out(inner) for inner in value]
    return value


__all__ = ["encodable", "error_reply", "reparsed"]
