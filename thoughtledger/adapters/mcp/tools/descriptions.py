"""What the tools say about themselves: the official server's text verbatim, then ours.

The ``sequentialthinking`` description and parameter descriptions are copied from the official
server (modelcontextprotocol/servers, ``src/sequentialthinking/index.ts``), so a model that was
prompted or fine-tuned against it sees the same words. The snake_case tools take their words
from the MCP API reference. Every sentence here is paid for in tokens
on every ``tools/list``, so the additions are short.
"""

from thoughtledger.ledger.thought import GUIDANCE

OFFICIAL_DESCRIPTION = """\
A detailed tool for dynamic and reflective problem-solving through thoughts.
This tool helps analyze problems through a flexible thinking process that can adapt and evolve.
Each thought can build on, question, or revise previous insights as understanding deepens.

When to use this tool:
- Breaking down complex problems into steps
- Planning and design with room for revision
- Analysis that might need course correction
- Problems where the full scope might not be clear initially
- Problems that require a multi-step solution
- Tasks that need to maintain context over multiple steps
- Situations where irrelevant information needs to be filtered out

Key features:
- You can adjust total_thoughts up or down as you progress
- You can question or revise previous thoughts
- You can add more thoughts even after reaching what seemed like the end
- You can express uncertainty and explore alternative approaches
- Not every thought needs to build linearly - you can branch or backtrack
- Generates a solution hypothesis
- Verifies the hypothesis based on the Chain of Thought steps
- Repeats the process until satisfied
- Provides a correct answer

Parameters explained:
- thought: Your current thinking step, which can include:
  * Regular analytical steps
  * Revisions of previous thoughts
  * Questions about previous decisions
  * Realizations about needing more analysis
  * Changes in approach
  * Hypothesis generation
  * Hypothesis verification
- nextThoughtNeeded: True if you need more thinking, even if at what seemed like the end
- thoughtNumber: Current number in sequence (can go beyond initial total if needed)
- totalThoughts: Current estimate of thoughts needed (can be adjusted up/down)
- isRevision: A boolean indicating if this thought revises previous thinking
- revisesThought: If is_revision is true, which thought number is being reconsidered
- branchFromThought: If branching, which thought number is the branching point
- branchId: Identifier for the current branch (if any)
- needsMoreThoughts: If reaching end but realizing more thoughts needed

You should:
1. Start with an initial estimate of needed thoughts, but be ready to adjust
2. Feel free to question or revise previous thoughts
3. Don't hesitate to add more thoughts if needed, even at the "end"
4. Express uncertainty when present
5. Mark thoughts that revise previous thinking or branch into new paths
6. Ignore information that is irrelevant to the current step
7. Generate a solution hypothesis when appropriate
8. Verify the hypothesis based on the Chain of Thought steps
9. Repeat the process until satisfied with the solution
10. Provide a single, ideally correct answer as the final output
11. Only set nextThoughtNeeded to false when truly done and a satisfactory answer is reached"""

SESSIONS_NOTE = """

Sessions: every thought is kept. Pass back the sessionId of your previous response to continue \
its session (omitted, a call continues your current one); clearSession: true starts afresh."""
"""What ``sequentialthinking`` adds after the official text: how to keep to one session.

Clients without a connection of their own (the 2026-07-28 protocol over HTTP) depend on the
model passing ``sessionId`` back, so the note says so first."""

HISTORY_NOTE = " {tool} reads earlier thoughts back."

# --descriptions compact: every tool's description within OpenAI's 1,024 characters.
COMPACT_DESCRIPTION = (
    GUIDANCE
    + "Each parameter's description says how to use it; every thought is kept in a session."
)
"""The official description cut to what a model needs besides the parameters' own words.

OpenAI-backed MCP clients fail on the official 2,781 characters (``string_above_max_length``).
The official text's "Parameters explained" list, and its advice about particular parameters,
move into :data:`COMPACT_PARAMETERS`, so the model still reads them.
"""
COMPACT_HISTORY_NOTE = " Use {tool} to read earlier thoughts back instead of repeating them."

COMPACT_PARAMETERS = {
    "thought": (
        "Your current thinking step, which can be an analytical step, a revision of a previous "
        "thought, a question about a previous decision, a realization that more analysis is "
        "needed, a change in approach, or a hypothesis generated or verified"
    ),
    "nextThoughtNeeded": (
        "True if you need more thinking, even if at what seemed like the end; false only when "
        "truly done and a satisfactory answer is reached"
    ),
    "thoughtNumber": (
        "Current number in sequence (numeric value, e.g., 1, 2, 3); it can go beyond the "
        "initial total if needed"
    ),
    "totalThoughts": (
        "Current estimate of thoughts needed (numeric value, e.g., 5, 10); adjust it up or "
        "down as you progress"
    ),
    "isRevision": "A boolean indicating if this thought revises previous thinking",
    "revisesThought": "If isRevision is true, which thought number is being reconsidered",
    "branchFromThought": "If branching, which thought number is the branching point",
    "branchId": "Identifier for the current branch (if any)",
    "needsMoreThoughts": "If reaching the end but realizing more thoughts are needed",
    "sessionId": (
        "The sessionId of your previous response: pass it back to continue that session "
        "(omitted, a call continues your current one)"
    ),
    "clearSession": "true starts afresh under a new sessionId; the old thoughts stay readable",
}
"""``sequentialthinking``'s parameter descriptions under ``--descriptions compact``: the official
text's "Parameters explained" and the sessions note, each beside its parameter (by camelCase
name; a parameter without one keeps its official words)."""

# Parameter descriptions of the official tool, verbatim.
THOUGHT = "Your current thinking step"
NEXT_THOUGHT_NEEDED = "Whether another thought step is needed"
THOUGHT_NUMBER = "Current thought number (numeric value, e.g., 1, 2, 3)"
TOTAL_THOUGHTS = "Estimated total thoughts needed (numeric value, e.g., 5, 10)"
IS_REVISION = "Whether this revises previous thinking"
REVISES_THOUGHT = "Which thought is being reconsidered"
BRANCH_FROM_THOUGHT = "Branching point thought number"
BRANCH_ID = "Branch identifier"
NEEDS_MORE_THOUGHTS = "If more thoughts are needed"
# The session pattern's additions.
SESSION_ID = "The sessionId of your previous response: pass it back to continue that session"
CLEAR_SESSION = "Set true to reset and start fresh"

OFFICIAL_PARAMETERS = {
    "thought": THOUGHT,
    "next_thought_needed": NEXT_THOUGHT_NEEDED,
    "thought_number": THOUGHT_NUMBER,
    "total_thoughts": TOTAL_THOUGHTS,
    "is_revision": IS_REVISION,
    "revises_thought": REVISES_THOUGHT,
    "branch_from_thought": BRANCH_FROM_THOUGHT,
    "branch_id": BRANCH_ID,
    "needs_more_thoughts": NEEDS_MORE_THOUGHTS,
}
"""``sequentialthinking``'s words for a thought's fields, by snake_case name (a field the official
server does not have is described in the definition's words)."""

STATUS_DESCRIPTION = (
    "Simple sequential thinking tool for organizing thoughts step-by-step, with revision and "
    "branching. Answers with a status (recorded, revision, branch or complete); session_id "
    '"default" is this connection\'s session.'
)
EXTERNAL_DESCRIPTION = (
    "AI-powered sequential thinking with external LLM integration: on step 1 thought is the "
    "problem, afterwards guidance, and a language model writes the thought (answered as "
    "thought_content, with model_used, confidence and reasoning_hint). With use_llm false the "
    "thought is recorded as you wrote it."
)
BATCH_DESCRIPTION = (
    "Record several sequential thoughts at once, in order, in one transaction: each item of "
    "thoughts takes sequentialthinking's arguments for one thought; sessionId, once, continues "
    "a session (omit it for this connection's). Every thought is checked first: one that "
    "breaks a rule refuses the whole batch, naming it by its index, and nothing is recorded. "
    "Answers each thought as sequentialthinking would, in order, under answers."
)
BATCH_THOUGHTS = (
    "The thoughts, in order: each with thought, thoughtNumber, totalThoughts and "
    "nextThoughtNeeded, and any of sequentialthinking's optional thought fields"
)
# Parameter descriptions of the snake_case tools, from the MCP API reference.
SNAKE = {
    "thought": "The content of the current thinking step",
    "thought_number": "Current thought number in sequence",
    "total_thoughts": "Estimated total number of thoughts needed",
    "next_thought_needed": "Whether another thought step is required",
    "is_revision": "Indicates this thought revises a previous one",
    "revises_thought": "Which thought number is being revised",
    "branch_from_thought": "Starting point for a new branch",
    "branch_id": "Unique identifier for the branch",
    "needs_more_thoughts": "Indicates need for more thoughts beyond estimate",
    "session_id": "Session identifier for continuity",
    "external_thought": "Step 1: problem/query, Step 2+: guidance/continuation",
    "model": (
        "LLM model to use (default LUX_MODEL_NORMAL; aliases: normal, reasoning, mini, opus, "
        "sonnet, grok)"
    ),
    "temperature": "Temperature for LLM generation (default 0.7)",
    "use_llm": "Whether to use LLM for generation (default true)",
}

# thinking_history's words: every listed byte is paid on each tools/list, so the schema's own
# keywords (default, minimum, maximum, enum) are not repeated in words; what a model needs to page
# (limit, more, nextCursor, after) is.
HISTORY_DESCRIPTION = "Read back a thinking session, now or as of an earlier version or time."
INSIGHTS_DESCRIPTION = (
    "Learn from your own past thinking sessions: how they usually go (completion and revision "
    "rates, typical length, how your totalThoughts estimates drift, loops) and, given a query, "
    "your earlier thoughts that match it (read one whole with thinking_history)."
)
HISTORY_SESSION_ID = "Session to read; omit for your current one"
HISTORY_SHOW = (
    "history: the thoughts, a page at a time; branches: each branch's thoughts; view: the "
    "summary (branches and view: up to {whole} events)"
)
HISTORY_AS_OF_VERSION = "As of this version (its first N events)"
HISTORY_AS_OF_TIME = "As it was at this time (ISO 8601 with a time zone)"
HISTORY_LIMIT = "Most thoughts per page; if more remain, the answer has more: true and a nextCursor"
HISTORY_AFTER = "The previous answer's nextCursor, to read the next page"
HISTORY_BRANCH = "Only this branch's thoughts"
HISTORY_MAX_BYTES = "Most bytes per page (a larger thought comes alone)"

__all__ = [
    "BRANCH_FROM_THOUGHT",
    "BRANCH_ID",
    "CLEAR_SESSION",
    "COMPACT_DESCRIPTION",
    "COMPACT_HISTORY_NOTE",
    "COMPACT_PARAMETERS",
    "EXTERNAL_DESCRIPTION",
    "HISTORY_AFTER",
    "HISTORY_AS_OF_TIME",
    "HISTORY_AS_OF_VERSION",
    "HISTORY_BRANCH",
    "HISTORY_DESCRIPTION",
    "HISTORY_LIMIT",
    "HISTORY_MAX_BYTES",
    "HISTORY_NOTE",
    "HISTORY_SESSION_ID",
    "HISTORY_SHOW",
    "INSIGHTS_DESCRIPTION",
    "IS_REVISION",
    "NEEDS_MORE_THOUGHTS",
    "NEXT_THOUGHT_NEEDED",
    "OFFICIAL_DESCRIPTION",
    "OFFICIAL_PARAMETERS",
    "REVISES_THOUGHT",
    "SESSIONS_NOTE",
    "SESSION_ID",
    "SNAKE",
    "STATUS_DESCRIPTION",
    "THOUGHT",
    "THOUGHT_NUMBER",
    "TOTAL_THOUGHTS",
]
