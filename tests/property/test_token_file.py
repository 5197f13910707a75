"""Properties of the token file: whatever is added and revoked, it round-trips through disk, and
exactly the tokens still in it verify, each as its own principal and role."""

import asyncio
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from thoughtledger.adapters.auth.tokens import TokenFile, check_role, load_tokens, save_tokens
from thoughtledger.adapters.auth.verifier import FileTokenVerifier
from thoughtledger.api.access import ROLES, Role, role_of

NOW = datetime(2026, 5, 1, 14, 2, 3, tzinfo=UTC)
names = st.sampled_from(["alice", "bob", "carol.d", "svc:agent-1"])
roles: st.SearchStrategy[Role] = st.sampled_from(ROLES)
steps = st.lists(
    st.one_of(
        st.tuples(st.just("add"), names, roles),
        st.tuples(st.just("revoke"), names, st.booleans()),
    ),
    max_size=12,
)


@settings(max_examples=40, deadline=None)
@given(steps)
def test_exactly_the_tokens_not_revoked_verify_after_a_round_trip_through_the_file(
    sequence: list[tuple[str, str, object]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tokens.json"
        save_tokens(path, TokenFile())
        verifier = FileTokenVerifier(path)
        tokens = TokenFile()
        live: dict[str, tuple[str, str, Role]] = {}  # token -> (id, name, role)
        dead: list[str] = []
        for action, name, extra in sequence:
            if action == "add":
                role = check_role(str(extra))
                tokens, token, record = tokens.add(name, role, now=NOW)
                live[token] = (record.id, name, role)
            else:
                held = [t for t, (_, owner, _) in live.items() if owner == name]
                if not held:
                    continue
                only = live[held[0]][0] if extra else None
                tokens, count = tokens.revoke(name, only)
                gone = held[:1] if only else held
                assert count == len(gone)
                for token in gone:
                    dead.append(token)
                    del live[token]
            save_tokens(path, tokens)
            assert load_tokens(path) == tokens
        for token, (token_id, name, role) in live.items():
            access = asyncio.run(verifier.verify_token(token))
            assert access is not None
            assert (access.client_id, role_of(access.scopes)) == (name, role)
            found = tokens.find(token)
            assert found is not None
            assert found.id == token_id
        for token in dead:
            assert asyncio.run(verifier.verify_token(token)) is None
        assert token_ids_unique(tokens)


def token_ids_unique(tokens: TokenFile) -> bool:
    ids = [record.id for record in tokens.records]
    return len(ids) == len(set(ids))
