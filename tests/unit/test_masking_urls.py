"""A ledger URL's passwords are masked wherever the URL carries one; the rest reads as written."""

import pytest

from thoughtledger.ledger.masking import mask_text, mask_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://agent:s3cret@db:5432/ledger", "postgresql://agent:***@db:5432/ledger"),
        (
            "postgresql://agent@db/ledger?password=s3cret",
            "postgresql://agent@db/ledger?password=***",
        ),
        (
            "postgresql://agent@db/ledger?sslmode=require&sslpassword=k3y&PASSWORD=x#top",
            "postgresql://agent@db/ledger?sslmode=require&sslpassword=***&PASSWORD=***#top",
        ),
        ("postgresql://agent:p@ss@db/ledger", "postgresql://agent:***@db/ledger"),
        ("sqlite:////abs/ledger.db?password=x", "sqlite:////abs/ledger.db?password=***"),
        ("sqlite:///ledger.db", "sqlite:///ledger.db"),
        (
            "postgresql://agent@db/ledger?application_name=tl",
            "postgresql://agent@db/ledger?application_name=tl",
        ),
        ("memory://", "memory://"),
        ("/a/plain/path.db", "/a/plain/path.db"),
    ],
)
def test_passwords_are_masked_and_the_rest_is_kept(url: str, shown: str) -> None:
    assert mask_url(url) == shown


def test_a_message_quoting_the_url_its_own_way_loses_the_secrets_too() -> None:
    url = "postgresql://agent:pw%21one@db/ledger?password=two+words&sslpassword=three"
    message = "cannot reach postgresql+asyncpg://agent:pw!one@db/ledger?password=two words: three"
    masked = mask_text(message, url)
    assert masked == "cannot reach postgresql+asyncpg://agent:***@db/ledger?password=***: ***"
    assert mask_text(message, None) == message


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://agent:Sec?ret99@db:5432/ledger",
        "postgresql://agent:Sec:ret99@db:5432/ledger?schema=s",
        "postgresql://agent:Sec/ret#99@db/ledger",
        "http://agent:Sec?ret99@collector:4318/v1/traces",
    ],
)
def test_a_password_holding_what_a_url_parser_splits_on_is_masked_whole(url: str) -> None:
    password = url.split("agent:", 1)[1].rsplit("@", 1)[0]
    assert password not in mask_url(url)
    assert "agent:***@" in mask_url(url)
    assert password not in mask_text(f"cannot connect to {url} as agent:{password}", url)
