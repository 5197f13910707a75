"""Uses an installed thoughtledger as a new user would; run by tools/clean_install.

It runs in the fresh environment's Python (``python -I``, from a folder outside the repository),
so it can rely only on what a plain ``pip install thoughtledger`` brings; the MCP SDK's client
is among that, since ``mcp`` is a core dependency.

Usage:
    python -I tools/clean_install.py core VERSION   --version, demo, ui, every module, MCP on SQLite
    python -I tools/clean_install.py imports        every module imports; an absent extra says so
    python -I tools/clean_install.py postgres URL   MCP on PostgreSQL (URL with ?schema=tl_test_*)
"""

import asyncio
import importlib
import importlib.util
import json
import os
import pkgutil
import re
import subprocess
import sys
import tempfile
import traceback
import urllib.request
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import parse_qs, urlsplit

import anyio
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent

WAIT = 60  # seconds: bounds every step, so a hang fails instead of stalling CI
BIN = Path(sys.executable).parent
THOUGHTLEDGER = str(BIN / "thoughtledger")
PACKAGES = ("thoughtledger",)
HTTP_URL = re.compile(r"url=(http://127\.0\.0\.1:\d+/mcp)")
ADAPTERS = {  # extra: the adapter that needs it
    "openai-agents": "openai_agents_tool",
    "pydantic-ai": "pydantic_ai_tool",
    "langchain": "langchain_tool",
}
CORE_ABSENT = ("agents", "pydantic_ai", "langchain_core", "openai", "asyncpg")
"""Modules only an extra brings: a core install without them is what the checks assume."""


class Failed(Exception):
    """A check failed; the message says which and what was seen."""


def child_env(home: Path) -> dict[str, str]:
    """The environment for ``thoughtledger``: nothing from the developer's setup leaks in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "THOUGHTLEDGER_"))}
    env.pop("VIRTUAL_ENV", None)
    env |= {"HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "NO_COLOR": "1"}
    return env


def run_cli(home: Path, *args: str) -> str:
    """Run ``thoughtledger ARGS``; return its stdout, or fail with everything it said."""
    done = subprocess.run(  # noqa: S603  # our own installed command, fixed arguments
        [THOUGHTLEDGER, *args],
        env=child_env(home),
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    if done.returncode != 0:
        raise Failed(
            f"thoughtledger {' '.join(args)} exited {done.returncode}\n{done.stdout}{done.stderr}"
        )
    return done.stdout


def check_cli(home: Path, version: str) -> None:
    shown = run_cli(home, "--version").strip()
    if shown != f"thoughtledger {version}":
        raise Failed(f"thoughtledger --version printed {shown!r}, not 'thoughtledger {version}'")
    print(f"   {shown}")
    by_module = subprocess.run(
        [sys.executable, "-m", "thoughtledger", "--version"],
        env=child_env(home),
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    if by_module.stdout.strip() != shown:
        raise Failed(f"python -m thoughtledger --version said {by_module.stdout!r}")
    demo = run_cli(home, "demo")
    if not demo.strip():
        raise Failed("thoughtledger demo printed nothing")
    print(f"   demo: {len(demo.splitlines())} lines")


def check_ui(home: Path) -> None:
    """``ui`` serves its pages (the shipped static files) and a session; ``export --html``."""
    url = f"sqlite:///{home / 'ui.db'}"
    session_id = json.loads(run_cli(home, "demo", "--db", url, "--json"))["sessionId"]
    page = home / "session.html"
    run_cli(home, "export", session_id, "--html", str(page), "--db", url)
    if 'id="tl-data"' not in page.read_text(encoding="utf-8"):
        raise Failed("export --html wrote a page without the session's data")
    with subprocess.Popen(  # noqa: S603  # our own installed command, fixed arguments
        [THOUGHTLEDGER, "ui", "--db", url, "--port", "0"],
        env=child_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            assert process.stdout is not None
            found = re.search(r"(http://127\.0\.0\.1:\d+/)", process.stdout.readline())
            if found is None:
                raise Failed(f"thoughtledger ui printed no URL: {process.communicate()}")
            base = found.group(1)
            index = _get(base)
            # Every file the page names, found the way a browser finds them.
            named = re.findall(
                r'<(?:script src|link rel="stylesheet" href)="/(static/[^"]+)"', index
            )
            fetched = {path: _get(base + path) for path in named}
            sessions = json.loads(_get(base + "api/sessions"))["sessions"]
        finally:
            process.terminate()
            process.communicate(timeout=WAIT)
    scripts = [path for path in named if path.endswith(".js")]
    ends_with_app = scripts[-1:] == ["static/app.js"] and "static/session.js" in scripts
    if not ends_with_app or "static/app.css" not in named:
        raise Failed(f"thoughtledger ui's page names {named!r}")
    if not index or not all(fetched.values()):
        raise Failed("thoughtledger ui did not serve its page and its files")
    # The export is the session page offline: it must hold every session script the app serves
    # (the app's own, which need the server: forks, the live socket, app.js, stay out).
    exported = page.read_text(encoding="utf-8")
    session_scripts = [path for path in scripts if path.startswith("static/session")]
    missing = [path for path in session_scripts if fetched[path] not in exported]
    if missing:
        raise Failed(f"export --html left out {missing!r}")
    if [row["sessionId"] for row in sessions] != [session_id]:
        raise Failed(f"thoughtledger ui listed {sessions!r}")
    print(f"   ui: page, {len(fetched)} files and the demo session; export --html: {page.name}")


def check_audit(home: Path) -> None:
    """An auditor's path: keys, a checkpoint, a proof checked with no ledger, then a redaction.

    The proof made before the redaction and the checkpoint taken before it still verify, and the
    ledger's files no longer hold the text (plain install: Ed25519 comes with the core).
    """
    path = home / "audit.db"
    url = f"sqlite:///{path}"
    session_id = json.loads(run_cli(home, "demo", "--db", url, "--json"))["sessionId"]
    key, checkpoint, bundle = home / "log.key", home / "before.cp", home / "proof.json"
    run_cli(home, "keygen", "-o", str(key), "--name", "audit.example/log")
    if key.stat().st_mode & 0o077:
        raise Failed(f"keygen wrote a private key others may read: {oct(key.stat().st_mode)}")
    run_cli(home, "checkpoint", "--db", url, "--key", str(key), "-o", str(checkpoint))
    proving = ["--db", url, "--checkpoint", str(checkpoint), "-o", str(bundle)]
    run_cli(home, "prove", session_id, "2", *proving)
    text = json.loads(bundle.read_text(encoding="utf-8"))["event"]["payload"]
    secret = json.loads(text)["content"]["thought"]
    pubkey = f"{key}.pub"
    run_cli(home, "verify-proof", str(bundle), "--pubkey", pubkey)
    run_cli(home, "redact", session_id, "--thought", "2", "--reason", "erasure", "--db", url)
    run_cli(home, "verify", "--db", url, "--checkpoint", str(checkpoint), "--pubkey", pubkey)
    run_cli(home, "verify-proof", str(bundle), "--pubkey", pubkey)
    files = [f for f in (path, Path(f"{path}-wal")) if f.exists()]
    held = [f.name for f in files if secret.encode() in f.read_bytes()]
    if held:
        raise Failed(f"after redact, {', '.join(held)} still hold the redacted text")
    print("   audit: keygen, checkpoint, prove, verify-proof, redact, verify --checkpoint")


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=WAIT) as answer:  # noqa: S310  # loopback, ours
        text: str = answer.read().decode("utf-8")
        return text


# -- every module, with only the core dependencies ------------------------------------------


def check_imports() -> None:
    here = [name for name in CORE_ABSENT if importlib.util.find_spec(name) is not None]
    if here:
        raise Failed(f"the core install holds {', '.join(here)}, which only extras should bring")
    problems: list[str] = []
    count = 0
    for package in PACKAGES:
        root = importlib.import_module(package)
        if not str(root.__file__).startswith(sys.prefix):
            raise Failed(f"{package} was imported from {root.__file__}, not the fresh install")
        for module in pkgutil.walk_packages(root.__path__, f"{package}.", problems.append):
            if module.name.rsplit(".", 1)[-1] == "__main__":
                continue  # importing it would run the program
            try:
                importlib.import_module(module.name)
            except Exception as exc:  # every failure is reported, not the first
                problems.append(f"import {module.name}: {type(exc).__name__}: {exc}")
            count += 1
    if problems:
        raise Failed("modules that do not import:\n" + "\n".join(map(str, problems)))
    print(f"   {count} modules import")
    asyncio.run(_check_absent_extras())


async def _check_absent_extras() -> None:
    import thoughtledger
    import thoughtledger.adapters.tool.frameworks as adapters

    async with thoughtledger.open_ledger("memory://") as ledger:
        for extra, name in ADAPTERS.items():
            adapter: Callable[[Any], object] = getattr(adapters, name)
            try:
                adapter(thoughtledger.sequential_thinking_tool(ledger))
            except Exception as exc:  # whatever it is, it must name the extra
                _expect_extra_named(extra, exc)
            else:
                raise Failed(f"without the {extra} extra, {name} worked")
    try:  # the driver is absent, so the address is never dialled
        async with thoughtledger.open_ledger("postgresql://nobody@127.0.0.1:9/nothing"):
            pass
    except Exception as exc:  # whatever it is, it must name the extra
        _expect_extra_named("postgres", exc)
    else:
        raise Failed("without the postgres extra, a PostgreSQL ledger opened")
    print(f"   absent extras named: {', '.join([*ADAPTERS, 'postgres'])}")


def _expect_extra_named(extra: str, error: Exception) -> None:
    if f"pip install 'thoughtledger[{extra}]'" not in str(error):
        raise Failed(f"without the {extra} extra: {type(error).__name__}: {error}") from error


# -- the MCP server, driven by the SDK's own client -----------------------------------------


def _json(result: CallToolResult) -> dict[str, Any]:
    if result.is_error:
        raise Failed(f"tool error: {_text(result)}")
    if result.structured_content is not None:
        structured: dict[str, Any] = result.structured_content
        return structured
    parsed: dict[str, Any] = json.loads(_text(result))
    return parsed


def _text(result: CallToolResult) -> str:
    return " ".join(part.text for part in result.content if isinstance(part, TextContent))


async def converse(client: Client, *, external: bool) -> None:
    """tools/list, three thoughts, thinking_history: what an agent does first."""
    info = client.server_info
    if info is None or info.name != "thoughtledger":
        raise Failed(f"initialize answered server {info!r}")
    tools = {tool.name for tool in (await client.list_tools()).tools}
    if not {"sequentialthinking", "thinking_history"} <= tools:
        raise Failed(f"tools/list lists {sorted(tools)}")
    for number in (1, 2, 3):
        arguments = {
            "thought": f"clean install, step {number}",
            "thoughtNumber": number,
            "totalThoughts": 3,
            "nextThoughtNeeded": number < 3,
        }
        answer = _json(await client.call_tool("sequentialthinking", arguments))
        if answer.get("thoughtNumber") != number:
            raise Failed(f"thought {number} answered {answer}")
    history = _json(await client.call_tool("thinking_history", {}))
    thoughts = [entry.get("thought") for entry in history.get("history", [])]
    if thoughts != [f"clean install, step {n}" for n in (1, 2, 3)]:
        raise Failed(f"thinking_history answered {history}")
    if external:  # the LLM tool without the llm extra: the model is told what to install
        result = await client.call_tool(
            "sequential_thinking_external",
            {
                "thought": "t",
                "thought_number": 4,
                "total_thoughts": 4,
                "next_thought_needed": False,
            },
        )
        if not result.is_error or "pip install 'thoughtledger[llm]'" not in _text(result):
            raise Failed(f"without the llm extra, the external tool answered: {_text(result)}")


async def over_stdio(url: str, home: Path, log: TextIO, *, external: bool) -> None:
    args = ["serve", "--db", url, *(["--tools", "all"] if external else [])]
    env = child_env(home) | {"OPENAI_API_KEY": "sk-clean-install-never-sent"}
    params = StdioServerParameters(command=THOUGHTLEDGER, args=args, env=env, cwd=str(home))
    with anyio.fail_after(WAIT):
        async with Client(stdio_client(params, errlog=log), mode="legacy") as client:
            await converse(client, external=external)
    print(f"   stdio: initialize, tools/list, 3 thoughts, thinking_history{' and llm' * external}")


async def over_http(url: str, home: Path, log: TextIO) -> None:
    command = [THOUGHTLEDGER, "serve", "--db", url, "--http", "--port", "0"]
    with anyio.fail_after(WAIT):
        async with serving(command, home, log) as endpoint, Client(endpoint, mode="legacy") as c:
            await converse(c, external=False)
    print(f"   http ({endpoint}): initialize, tools/list, 3 thoughts, thinking_history")


@asynccontextmanager
async def serving(command: list[str], home: Path, log: TextIO) -> AsyncIterator[str]:
    """Start the HTTP server; yield the URL it reports on stderr; it must stop with exit 0."""
    process = await anyio.open_process(
        command, env=child_env(home), cwd=home, stdout=subprocess.DEVNULL
    )
    found: list[str] = []
    ready = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(_read_log, process, log, found, ready)
        try:
            await ready.wait()
            if not found:
                raise Failed(f"serve --http exited {await process.wait()} before reporting a URL")
            yield found[0]
        finally:
            if process.returncode is None:
                process.terminate()
            code = await process.wait()
        if code != 0:
            raise Failed(f"serve --http exited {code} when terminated (expected a clean stop, 0)")


async def _read_log(process: Process, log: TextIO, found: list[str], ready: anyio.Event) -> None:
    assert process.stderr is not None
    buffered = ""
    async for chunk in TextReceiveStream(process.stderr):  # to the end: the pipe never fills
        log.write(chunk)
        buffered += chunk
        match = HTTP_URL.search(buffered)
        if match and not ready.is_set():
            found.append(match.group(1))
            ready.set()
    ready.set()


async def check_mcp(url: str, home: Path, log: TextIO, *, external: bool) -> None:
    await over_stdio(url, home, log, external=external)
    await over_http(url, home, log)


async def drop_schema(url: str) -> None:
    import asyncpg  # the postgres extra is installed by now

    schema = parse_qs(urlsplit(url).query)["schema"][0]
    if not re.fullmatch(r"tl_test_[a-z0-9_]+", schema):
        raise Failed(f"refusing to drop schema {schema!r}: not a throwaway tl_test_* name")
    connection = await asyncpg.connect(url.split("?", 1)[0])
    try:
        await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await connection.close()


def _leaf(exc: BaseException) -> BaseException:
    """The first error inside ``exc``: task groups wrap what was raised in them."""
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


def run(command: str, rest: list[str], home: Path, log: TextIO) -> bool:
    """Run one of the usage's commands; ``False`` when there is no such command."""
    if command == "core" and len(rest) == 1:
        check_cli(home, rest[0])
        check_ui(home)
        check_audit(home)
        ledger = f"sqlite:///{home / 'ledger.db'}"
        anyio.run(lambda: check_mcp(ledger, home, log, external=True))
        log.seek(0)  # the servers' stderr matters only if they failed
        log.truncate()
        # In a process of its own: this one has imported the client side already.
        imports = [sys.executable, "-I", "-u", __file__, "imports"]
        if subprocess.run(imports, timeout=WAIT, check=False).returncode:  # noqa: S603
            raise Failed("the import check failed (see above)")
    elif command == "imports" and not rest:
        check_imports()
    elif command == "postgres" and len(rest) == 1:
        try:
            anyio.run(lambda: check_mcp(rest[0], home, log, external=False))
        finally:
            anyio.run(drop_schema, rest[0])
    else:
        return False
    return True


def main(argv: list[str]) -> int:
    command, *rest = argv or ["help"]
    with tempfile.TemporaryDirectory(prefix="tl-clean-") as tmp:
        home = Path(tmp)
        log_path = home / "server.log"
        try:
            with log_path.open("w", encoding="utf-8") as log:
                if not run(command, rest, home, log):
                    print(__doc__, file=sys.stderr)
                    return 2
        except Exception as exc:
            failure = _leaf(exc)
            if isinstance(failure, TimeoutError):
                failure = Failed(f"no answer within {WAIT} s")
            if not isinstance(failure, Failed | MCPError):  # unexpected: show where it arose
                traceback.print_exception(failure)
            server_log = log_path.read_text(encoding="utf-8")
            if server_log.strip():
                print(f"the server's stderr:\n{server_log}", file=sys.stderr)
            said = (
                str(failure)
                if isinstance(failure, Failed)
                else f"{type(failure).__name__}: {failure}"
            )
            print(f"clean install: FAILED: {said}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
