"""Credentials in a provider's words are masked; the rest of what it said is kept."""

import pytest

from thoughtledger.ledger.masking import mask_secrets

KEY = "my-own-gateway-key-4711"


@pytest.mark.parametrize(
    ("said", "masked"),
    [
        (
            "Incorrect API key provided: sk-proj-AbCdEf0123456789xyz. You can find your key at …",
            "Incorrect API key provided: ***. You can find your key at …",
        ),
        (
            "No auth credentials found for sk-or-v1-0123456789abcdef",
            "No auth credentials found for ***",
        ),
        ("invalid x-api-key sk-ant-api03-abcdefghijkl", "invalid x-api-key ***"),
        (
            "rejected header Authorization: Bearer eyJhbGciOi.J9.abc",
            "rejected header Authorization: ***",
        ),
        ('{"authorization": "Basic dXNlcjpwYXNz"}', '{"authorization": "***"}'),
        ("token was Bearer abc.def-ghi", "token was Bearer ***"),
        ("bad request api_key=abc123&model=x", "bad request api_key=***&model=x"),
        ('{"api-key": "abc123", "model": "x"}', '{"api-key": "***", "model": "x"}'),
        ("GET /v1/models?key=AIzaSyA-123&alt=json", "GET /v1/models?key=***&alt=json"),
        ("password: hunter22 rejected", "password: *** rejected"),
        (
            "cannot reach http://bob:s3cret@proxy:8080/v1",
            "cannot reach http://bob:***@proxy:8080/v1",
        ),
        (f"upstream saw {KEY} and refused", "upstream saw *** and refused"),
    ],
)
def test_credentials_are_masked(said: str, masked: str) -> None:
    assert mask_secrets(said, [KEY, None]) == masked


@pytest.mark.parametrize(
    "said",
    [
        "HTTP 429: Rate limit reached for gpt-4o in organization org-123 on tokens per min",
        "max_tokens: 5 is too small",
        "Unexpected token < in JSON at position 0",
        "The model `gpt-5` does not exist or you do not have access to it.",
        "Invalid 'messages[1].content': string too long.",
        "HTTP 401: invalid api key",
    ],
)
def test_ordinary_provider_messages_are_kept_whole(said: str) -> None:
    assert mask_secrets(said, [KEY]) == said


def test_a_known_key_inside_a_longer_one_leaves_no_part_behind() -> None:
    long, short = "gateway-key-0001-and-more", "gateway-key-0001"
    assert mask_secrets(f"got {long}", [short, long]) == "got ***"


def test_known_keys_too_short_to_be_secrets_are_not_masked_word_for_word() -> None:
    assert mask_secrets("use the key abc", ["abc", ""]) == "use the key abc"
