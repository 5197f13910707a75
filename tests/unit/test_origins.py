"""An allowed origin is read once, as a browser writes ``Origin``: for ``ui`` and ``serve``."""

import pytest

from thoughtledger.adapters.common.origins import parse_origin
from thoughtledger.api import InvalidInputError


@pytest.mark.parametrize(
    ("typed", "written"),
    [
        ("http://localhost:3000", "http://localhost:3000"),
        ("  HTTPS://Example.COM/ ", "https://example.com"),
        ("http://example.com:80", "http://example.com"),
        ("https://example.com:443", "https://example.com"),
        ("https://example.com:8443", "https://example.com:8443"),
        ("http://[::1]:5173", "http://[::1]:5173"),
    ],
)
def test_an_origin_is_written_as_a_browser_sends_it(typed: str, written: str) -> None:
    assert parse_origin(typed) == written


@pytest.mark.parametrize(
    "typed",
    [
        "localhost:3000",
        "ftp://example.com",
        "http://example.com/app",
        "http://example.com?x=1",
        "http://user@example.com",
        "http://*.example.com",
        "http://example.com:99999",
        "http://",
    ],
)
def test_what_is_not_an_origin_is_refused_saying_so(typed: str) -> None:
    with pytest.raises(InvalidInputError, match="is not an origin"):
        parse_origin(typed, any_port=True)


def test_every_port_is_allowed_only_where_asked_for() -> None:
    assert parse_origin("http://LOCALHOST:*", any_port=True) == "http://localhost:*"
    with pytest.raises(InvalidInputError, match="name one port"):
        parse_origin("http://localhost:*")
    with pytest.raises(InvalidInputError, match="not both"):
        parse_origin("http://localhost:3000:*", any_port=True)
