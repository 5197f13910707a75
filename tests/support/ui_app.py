"""``thoughtledger ui`` as a person starts it, in a child process, and sessions of principals.

Usage::

    with ui_app(db, tmp_path / "tokens.json") as app:    # ui --auth FILE --port 0
        alice = app.mint("alice", "reader")
        with app.client() as http: ...                     # httpx, base URL set
    app.output                                            # (stdout, stderr), once stopped
"""

import asyncio
import re
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx

from tests.support.processes import ROOT, WAIT, child_env, thoughtledger
from thoughtledger import open_ledger
from thoughtledger.adapters.auth.tokens import TokenFile, load_tokens_or_empty, save_tokens
from thoughtledger.api.access import Role

_URL = re.compile(r"thoughtledger ui: (http://127\.0\.0\.1:(\d+)/)")


@dataclass
class UiApp:
    """A running ``thoughtledger ui``.

    Attributes:
        base: Its address, ``http://127.0.0.1:PORT/``.
        port: Its port.
        token_file: The token file it was given with ``--auth`` (``None``: none).
        pid: Its process id (to read its memory from ``/proc``).
        output: What it printed (stdout, stderr), filled in once it has stopped.
    """

    base: str
    port: int
    token_file: Path | None
    pid: int = 0
    output: tuple[str, str] = field(default=("", ""))

    @property
    def origin(self) -> str:
        """Its own origin, as a browser on its pages sends it."""
        return self.base.rstrip("/")

    def mint(self, name: str, role: Role = "writer") -> str:
        """A new token for ``name``; the app accepts it from its next request on."""
        assert self.token_file is not None
        tokens, token, _ = load_tokens_or_empty(self.token_file).add(
            name, role, now=datetime.now(UTC)
        )
        save_tokens(self.token_file, tokens)
        return token

    def revoke(self, name: str) -> None:
        """``thoughtledger token revoke NAME`` in a child process (checked: exit 0)."""
        assert self.token_file is not None
        ran = thoughtledger("token", "revoke", name, "--file", str(self.token_file))
        assert ran.returncode == 0, ran.stderr

    @contextmanager
    def client(self, headers: Mapping[str, str] | None = None) -> Iterator[httpx.Client]:
        """An HTTP client for the app, sending ``headers`` (no cookie yet)."""
        with httpx.Client(base_url=self.base, timeout=WAIT, headers=headers) as http:
            yield http


@contextmanager
def ui_app(db: str, token_file: Path | None, *options: str) -> Iterator[UiApp]:
    """Run ``thoughtledger ui --db DB --port 0 [--auth TOKEN_FILE] OPTIONS``; stop it after.

    An empty token file is made first when ``token_file`` does not exist. It must stop
    gracefully (exit 0) on SIGTERM.
    """
    auth: list[str] = []
    if token_file is not None:
        if not token_file.exists():
            save_tokens(token_file, TokenFile())
        auth = ["--auth", str(token_file)]
    command = [sys.executable, "-m", "thoughtledger.adapters.cli", "ui", "--db", db, "--port", "0"]
    with subprocess.Popen(  # noqa: S603  # our interpreter, our module
        [*command, *auth, *options],
        cwd=ROOT,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = _URL.search(line)
        if found is None:
            process.kill()
            _, err = process.communicate(timeout=WAIT)
            raise AssertionError(f"thoughtledger ui printed {line!r}; stderr: {err}")
        app = UiApp(found.group(1), int(found.group(2)), token_file, process.pid)
        try:
            yield app
        finally:
            process.send_signal(signal.SIGTERM)
            out, err = process.communicate(timeout=WAIT)
            app.output = (line + out, err)
        assert process.returncode == 0, app.output


def record_owned(url: str, sessions: Mapping[str, str | None]) -> dict[str, str]:
    """Start one session per name in ``sessions`` (mapped to its owner); return name -> id.

    Each session holds two thoughts, the first reading ``"<name> thinks"``.
    """

    async def record() -> dict[str, str]:
        made: dict[str, str] = {}
        async with open_ledger(url, ttl=None) as ledger:
            for name, owner in sessions.items():
                first = {
                    "thought": f"{name} thinks",
                    "thought_number": 1,
                    "total_thoughts": 2,
                    "next_thought_needed": True,
                }
                outcome = await ledger.think(None, first, owner=owner)
                second = {**first, "thought": f"{name} again", "thought_number": 2}
                await ledger.think(outcome.session_id, second, owner=owner)
                made[name] = outcome.session_id
        return made

    return asyncio.run(record())
