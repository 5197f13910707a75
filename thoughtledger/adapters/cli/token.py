"""``thoughtledger token``: the bearer tokens ``serve --http --auth FILE`` accepts.

``token add NAME`` prints a new token once, on stdout and alone there (so ``$(...)`` captures
it), or with ``-o FILE`` writes it to a new file only its owner can read (a shell's ``> FILE``
makes one every user can read); ``token list`` shows who holds which tokens, never a secret;
``token revoke NAME`` ends all of NAME's tokens, or one with ``--id``. The file stores only
SHA-256 hashes.
"""

import argparse
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from thoughtledger.adapters.auth.tokens import (
    TokenFile,
    TokenRecord,
    check_name,
    default_token_path,
    load_tokens,
    load_tokens_or_empty,
    update_tokens,
)
from thoughtledger.adapters.cli.catalogue import summary
from thoughtledger.adapters.cli.common import (
    EXIT_OK,
    CliError,
    Commands,
    Parser,
    Ui,
    UsageError,
    add_json_option,
    when,
)
from thoughtledger.adapters.cli.outfile import atomic_file, exists, output_path
from thoughtledger.api import DEFAULT_ROLE, ROLES

SUMMARY = summary("token")


def register(commands: Commands) -> None:
    """Add ``token`` and its three subcommands."""
    parser: Parser = commands.add_parser("token", help=SUMMARY, description=SUMMARY)
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    add = actions.add_parser(
        "add", help="make a token for NAME and print it once", description=_ADD_HELP
    )
    add.add_argument("name", metavar="NAME", help="the principal the token stands for")
    add.add_argument(
        "--role",
        choices=ROLES,
        default=DEFAULT_ROLE,
        help="writer: reads and writes its own sessions; reader: reads its own; auditor: reads "
        "every session, writes none (default: %(default)s)",
    )
    add.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the token to FILE, readable by you alone (0600), instead of stdout; an "
        "existing FILE is kept unless --force",
    )
    add.add_argument("--force", action="store_true", help="with -o: overwrite FILE if it exists")
    _file_option(add)
    add_json_option(add)
    add.set_defaults(handler=_add)

    listing = actions.add_parser(
        "list", help="who holds which tokens (never the secrets)", description=_LIST_HELP
    )
    _file_option(listing)
    add_json_option(listing)
    listing.set_defaults(handler=_list)

    revoke = actions.add_parser(
        "revoke", help="end every token of NAME, or one with --id", description=_REVOKE_HELP
    )
    revoke.add_argument("name", metavar="NAME", help="whose tokens to end")
    revoke.add_argument("--id", dest="token_id", metavar="ID", help="only this token (see list)")
    _file_option(revoke)
    revoke.set_defaults(handler=_revoke)


_ADD_HELP = (
    "Make a bearer token for NAME and print it once on stdout: only its hash is kept. "
    "A principal may hold several tokens (say a writer token for an agent and a reader token "
    "for a dashboard)."
)

_LIST_HELP = (
    "Show who holds which tokens: name, role, id and when each was made; never a token or its "
    "hash. A --file that does not exist is an error (a mistyped name is not an empty file); "
    "without --file, a default file not made yet lists no tokens."
)
_REVOKE_HELP = (
    "End every token of NAME, or with --id only that one (ids are in token list). A server "
    "using the file refuses a revoked token from its next request."
)


def _file_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--file",
        type=Path,
        metavar="FILE",
        help=f"the token file (default: {default_token_path()})",
    )


def _path(args: argparse.Namespace) -> Path:
    given: Path | None = args.file
    return given if given is not None else default_token_path()


async def _add(args: argparse.Namespace, ui: Ui) -> int:
    """Add a token and print it.

    Raises:
        InvalidInputError: NAME is not a valid name.
        TokenFileError: The file is unreadable, not a token file, or cannot be written.
        UsageError: ``--force`` without ``-o``, or ``-o`` names a folder or a missing folder's file.
        CliError: The ``-o`` file exists (without ``--force``) or cannot be written; no token
            is left in the token file then.
    """
    path = _path(args)
    check_name(args.name)  # before anything is created for it
    if args.force and args.output is None:
        raise UsageError("--force goes with -o FILE")
    target = output_path(args.output, "planner.token") if args.output is not None else None
    if target is not None and not args.force and (target.exists() or target.is_symlink()):
        raise exists(target)  # before a token is made that nobody would ever see

    def add(tokens: TokenFile) -> tuple[TokenFile, tuple[str, TokenRecord]]:
        more, token, record = tokens.add(args.name, args.role, now=datetime.now(UTC))
        return more, (token, record)

    if target is None:
        token, record = update_tokens(path, add)
        if args.json:
            ui.json({**_record_json(record, path), "token": token})
        else:
            sys.stdout.write(token + "\n")
            sys.stdout.flush()
        shown = "it is shown only this once"
    else:
        record = _add_into(target, path, add, overwrite=args.force)
        if args.json:
            ui.json({**_record_json(record, path), "output": str(target)})
        shown = f"the token is in {target}, readable by you alone"
    ui.err.print(
        f"token {record.id} for {record.name} ({record.role}) saved in {path}; {shown}. Serve "
        f"with: thoughtledger serve --http --auth {path}; clients send the header "
        "Authorization: Bearer <token>",
        highlight=False,
        markup=False,
    )
    return EXIT_OK


def _record_json(record: TokenRecord, path: Path) -> dict[str, str]:
    return {"id": record.id, "name": record.name, "role": record.role, "file": str(path)}


def _add_into(
    target: Path,
    path: Path,
    add: Callable[[TokenFile], tuple[TokenFile, tuple[str, TokenRecord]]],
    *,
    overwrite: bool,
) -> TokenRecord:
    """Add the token and write it to ``target`` (0600); a token never written is taken back.

    Raises:
        TokenFileError: The token file is unreadable, not a token file, or cannot be written.
        CliError: ``target`` cannot be written, or appeared meanwhile (without ``overwrite``).
    """
    made: list[TokenRecord] = []
    try:
        with atomic_file(target, overwrite=overwrite) as out:  # created 0600
            token, record = update_tokens(path, add)
            made.append(record)
            out.write(token + "\n")
    except CliError:
        if made:  # nobody will ever see that token: it must not stay valid
            unseen = made[0]
            update_tokens(path, lambda tokens: tokens.revoke(unseen.name, unseen.id))
        raise
    return made[0]


async def _list(args: argparse.Namespace, ui: Ui) -> int:
    """Show the tokens: name, role, id, created; never hashes or tokens.

    Raises:
        TokenFileError: The file is unreadable or not a token file, or ``--file`` names none
            (only the default file, not made yet, counts as empty).
    """
    path = _path(args)
    # Reading creates nothing; a file named by hand and missing is a typo, not "no tokens".
    tokens = load_tokens(path) if args.file is not None else load_tokens_or_empty(path)
    if args.json:
        ui.json([_as_json(record) for record in tokens.records])
        return EXIT_OK
    if not tokens.records:
        ui.out.print(f"no tokens in {path}: add one with thoughtledger token add NAME")
        return EXIT_OK
    table = ui.table("name", "role", "id", "created")
    for record in sorted(tokens.records, key=lambda r: (r.name, r.created, r.id)):
        table.add_row(record.name, record.role, record.id, when(record.created))
    ui.show(table)
    return EXIT_OK


async def _revoke(args: argparse.Namespace, ui: Ui) -> int:
    """Remove NAME's tokens (or one of them).

    Raises:
        InvalidInputError: NAME holds no such token.
        TokenFileError: The file is missing, unreadable, or cannot be written.
    """
    path = _path(args)
    load_tokens(path)  # a missing file is an error here, not an empty one to create
    count = update_tokens(path, lambda tokens: tokens.revoke(args.name, args.token_id))
    ui.err.print(
        f"revoked {count} token{'s' if count != 1 else ''} of {args.name}; a server using "
        f"{path} refuses {'them' if count != 1 else 'it'} from its next request",
        highlight=False,
        markup=False,
    )
    return EXIT_OK


def _as_json(record: TokenRecord) -> dict[str, str]:
    shown = record.as_json()
    del shown["sha256"]  # a hash of a token is not a secret, but nobody needs it here
    return shown
