"""Thin adapters: the sequential-thinking tool as each agent framework's own tool object.

Each adapter takes a :class:`~thoughtledger.adapters.tool.SequentialThinkingTool`, hands the
framework
the tool's name, description and parameter schema unchanged, and lets the framework call
:meth:`~thoughtledger.adapters.tool.SequentialThinkingTool.execute`; so the session rules, the
validation
and the ledger are the same whichever framework drives the agent. Invalid arguments go back to the
model in the framework's own way of asking for a corrected call; any other error propagates.

Frameworks are optional extras, imported only when their adapter is called:

===========================  =============================  ==============================
adapter                      builds                         extra
===========================  =============================  ==============================
:func:`openai_agents_tool`   ``agents.FunctionTool``        ``thoughtledger[openai-agents]``
:func:`pydantic_ai_tool`     ``pydantic_ai.Tool``           ``thoughtledger[pydantic-ai]``
:func:`langchain_tool`       ``StructuredTool``             ``thoughtledger[langchain]``
===========================  =============================  ==============================
"""

from thoughtledger.adapters.tool.frameworks.langchain import langchain_tool
from thoughtledger.adapters.tool.frameworks.openai_agents import openai_agents_tool
from thoughtledger.adapters.tool.frameworks.pydantic_ai import pydantic_ai_tool

__all__ = ["langchain_tool", "openai_agents_tool", "pydantic_ai_tool"]
