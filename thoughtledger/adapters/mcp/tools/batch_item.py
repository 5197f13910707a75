"""One item of ``sequential_thinking_batch``'s ``thoughts``: a thought in the MCP argument shape.

Apart from the tool (:mod:`thoughtledger.adapters.mcp.tools.batch`) so that ``thoughtledger
record``, which reads lines of such thoughts, checks them as the tool does without loading the MCP
SDK's server and models (a second of start-up).
"""

import inspect
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model

from thoughtledger.adapters.mcp.tools import descriptions as text
from thoughtledger.adapters.mcp.tools.parameters import OFFICIAL_CORE_ORDER, thought_parameters


def _item_model() -> type[BaseModel]:
    # The thought's parameters of sequentialthinking, as the fields of one item. Closed, unlike
    # the tool's own arguments: a sessionId inside an item is an error to name, not to ignore.
    fields: dict[str, Any] = {
        p.name: (p.annotation, ... if p.default is inspect.Parameter.empty else p.default)
        for p in thought_parameters(OFFICIAL_CORE_ORDER, text.OFFICIAL_PARAMETERS, camel=True)
    }
    model: type[BaseModel] = create_model(
        "BatchThought",
        __config__=ConfigDict(extra="forbid", frozen=True),
        __doc__="One thought of a batch: sequentialthinking's arguments for it.",
        __module__=__name__,
        **fields,
    )
    return model


BatchThought = _item_model()
"""One item of ``thoughts``: ``sequentialthinking``'s thought arguments, camelCase."""


__all__ = ["BatchThought"]
