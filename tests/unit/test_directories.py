"""Each principal's session handles are bounded on their own: naming many sessions evicts only
the namer's own handles, never another principal's."""

from thoughtledger.adapters.mcp.tools.sessions import Directories, connection_handle, name_handle


def test_a_principal_naming_more_sessions_than_fit_evicts_only_its_own() -> None:
    directories = Directories(capacity=100)
    directories.of("alice").bind(connection_handle("a-connection"), "alice-session")
    directories.of(None).bind(connection_handle("local"), "local-session")
    flood = directories.of("mallory")
    for n in range(10_050):
        flood.bind(name_handle(f"s{n}"), f"session-{n}")
    assert directories.of("alice").peek(connection_handle("a-connection")) == "alice-session"
    assert directories.of(None).peek(connection_handle("local")) == "local-session"
    assert flood.peek(name_handle("s0")) is None  # the flood evicted its own oldest
    assert flood.peek(name_handle("s10049")) == "session-10049"


def test_within_one_principal_the_least_recently_used_handle_goes_first() -> None:
    directory = Directories(capacity=2).of("alice")
    directory.bind("a", "1")
    directory.bind("b", "2")
    assert directory.resolve("a", lambda: "unused") == "1"  # "a" is now the most recent
    directory.bind("c", "3")
    assert (directory.peek("a"), directory.peek("b"), directory.peek("c")) == ("1", None, "3")
