"""The facade's public surface: what users and the adapters beside it import.

The facade (:mod:`thoughtledger.api`) holds the use cases; this module is its one door.
Each way in or out (``mcp``, ``cli``, ``ui``, ``otel``, ``llm``, ``tool``, ``auth``) imports these
names, never the facade's modules (the import-linter contracts in ``pyproject.toml`` say so).
A few of the core's public types travel through here too (the thought command, checkpoint keys,
a chain's report), so that an adapter needs nothing of the core but its events and errors.

Example::

    from thoughtledger.api import open_ledger

    async with open_ledger() as ledger:
        session = await ledger.new_session()
        await session.process_sequential_thinking(
            thought="Map the failure modes", thought_number=1, total_thoughts=3,
            next_thought_needed=True)
"""

from thoughtledger.api.access import (
    AGENT_META_KEY,
    DEFAULT_ROLE,
    ROLES,
    SCOPE_PREFIX,
    Grant,
    Principal,
    Role,
    check_agent,
    principal_of,
    role_of,
    session_agent,
)
from thoughtledger.api.annotation import Annotations
from thoughtledger.api.batching import Batches, check_batch
from thoughtledger.api.bootstrap import (
    READ_URL_ENV,
    URL_ENV,
    default_path,
    open_ledger,
    open_store,
    resolve_url,
    schema_version,
)
from thoughtledger.api.capture import (
    CapturedAction,
    CapturedReasoning,
    CapturedSpan,
    CaptureReport,
    Capturing,
)
from thoughtledger.api.errors import (
    AccessDeniedError,
    GenerationError,
    ProviderNotConfiguredError,
    TelemetryExportError,
)
from thoughtledger.api.figures import (
    GroupStats,
    LabelStats,
    LedgerStats,
    Statistics,
    ledger_stats,
)
from thoughtledger.api.generation import (
    DEFAULT_TEMPERATURE,
    GENERATION_FAILED,
    ThoughtWriter,
    WrittenThought,
    think_with_writer,
)
from thoughtledger.api.history import DEFAULT_HISTORY_LIMIT, HistoryPage
from thoughtledger.api.lineage import (
    COMPARE_THOUGHTS_MAX,
    ForkComparison,
    ForkEntry,
    Lineage,
)
from thoughtledger.api.listing import DEFAULT_PAGE, SessionsPage
from thoughtledger.api.lookup import SessionMatch, StreamHead
from thoughtledger.api.loop_follow import Loops
from thoughtledger.api.prompt import (
    ANSWER_SCHEMA,
    DEFAULT_MAX_PROMPT_CHARS,
    PROMPT_VERSION,
    PromptMessage,
    ThoughtPrompt,
    build_prompt,
    prompt_sha256,
)
from thoughtledger.api.proofs import CheckpointReport, Proofs, verify_bundle
from thoughtledger.api.recording import ThinkOutcome
from thoughtledger.api.redaction import (
    RedactedThought,
    Redaction,
    RedactionReport,
    default_author,
)
from thoughtledger.api.scope import Scope
from thoughtledger.api.search import SearchPage, SearchResult
from thoughtledger.api.service import DEFAULT_TTL, Ledger
from thoughtledger.api.session import Profile, Session
from thoughtledger.api.session_figures import SessionFigures
from thoughtledger.api.streaming import StreamingWriter, stream_with_writer
from thoughtledger.api.transfer import (
    CheckedFile,
    ImportRefusedError,
    NoProgress,
    PendingImport,
    Progress,
    Transfer,
    check_file,
)
from thoughtledger.api.transfer.jsonl import ManifestSession, manifest_line, to_line
from thoughtledger.api.transfer.signed import check_checkpoint
from thoughtledger.api.turns import Turns
from thoughtledger.ledger.chain import VerifyReport
from thoughtledger.ledger.checkpoint import Checkpoint, Signer, Verifier
from thoughtledger.ledger.decide import (
    Generated,
    ThinkCommand,
    checked_command,
    parse_command,
    starts_a_run,
)
from thoughtledger.ledger.decide_batch import MAX_BATCH_THOUGHTS
from thoughtledger.ledger.errors import (
    ConcurrencyError,
    IntegrityError,
    InvalidBatchError,
    InvalidInputError,
    InvalidThoughtError,
    LedgerError,
    SessionNotFoundError,
    StoreError,
    StoreUnavailableError,
)
from thoughtledger.ledger.store.base import ClosedOnExit
from thoughtledger.ledger.store.loop_marks import LoopMark

__all__ = [
    "AGENT_META_KEY",
    "ANSWER_SCHEMA",
    "COMPARE_THOUGHTS_MAX",
    "DEFAULT_HISTORY_LIMIT",
    "DEFAULT_MAX_PROMPT_CHARS",
    "DEFAULT_PAGE",
    "DEFAULT_ROLE",
    "DEFAULT_TEMPERATURE",
    "DEFAULT_TTL",
    "GENERATION_FAILED",
    "MAX_BATCH_THOUGHTS",
    "PROMPT_VERSION",
    "READ_URL_ENV",
    "ROLES",
    "SCOPE_PREFIX",
    "URL_ENV",
    "AccessDeniedError",
    "Annotations",
    "Batches",
    "CaptureReport",
    "CapturedAction",
    "CapturedReasoning",
    "CapturedSpan",
    "Capturing",
    "CheckedFile",
    "Checkpoint",
    "CheckpointReport",
    "ClosedOnExit",
    "ConcurrencyError",
    "ForkComparison",
    "ForkEntry",
    "Generated",
    "GenerationError",
    "Grant",
    "GroupStats",
    "HistoryPage",
    "ImportRefusedError",
    "IntegrityError",
    "InvalidBatchError",
    "InvalidInputError",
    "InvalidThoughtError",
    "LabelStats",
    "Ledger",
    "LedgerError",
    "LedgerStats",
    "Lineage",
    "LoopMark",
    "Loops",
    "ManifestSession",
    "NoProgress",
    "PendingImport",
    "Principal",
    "Profile",
    "Progress",
    "PromptMessage",
    "Proofs",
    "ProviderNotConfiguredError",
    "RedactedThought",
    "Redaction",
    "RedactionReport",
    "Role",
    "Scope",
    "SearchPage",
    "SearchResult",
    "Session",
    "SessionFigures",
    "SessionMatch",
    "SessionNotFoundError",
    "SessionsPage",
    "Signer",
    "Statistics",
    "StoreError",
    "StoreUnavailableError",
    "StreamHead",
    "StreamingWriter",
    "TelemetryExportError",
    "ThinkCommand",
    "ThinkOutcome",
    "ThoughtPrompt",
    "ThoughtWriter",
    "Transfer",
    "Turns",
    "Verifier",
    "VerifyReport",
    "WrittenThought",
    "build_prompt",
    "check_agent",
    "check_batch",
    "check_checkpoint",
    "check_file",
    "checked_command",
    "default_author",
    "default_path",
    "ledger_stats",
    "manifest_line",
    "open_ledger",
    "open_store",
    "parse_command",
    "principal_of",
    "prompt_sha256",
    "resolve_url",
    "role_of",
    "schema_version",
    "session_agent",
    "starts_a_run",
    "stream_with_writer",
    "think_with_writer",
    "to_line",
    "verify_bundle",
]
