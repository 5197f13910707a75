"""No command prints a ledger URL's passwords: not in the user part, not in the query."""

import pytest

from tests.support.processes import thoughtledger

SECRETS = ("pw-in-userinfo", "pw-in-query")


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://agent:{SECRETS[0]}@127.0.0.1:1/none?password={SECRETS[1]}",  # unreachable
        f"nosuch://agent:{SECRETS[0]}@host/db?password={SECRETS[1]}",  # no known form
        f"sqlite://relative.db?password={SECRETS[1]}",  # sqlite:// with too few slashes
    ],
    ids=["unreachable", "unknown-scheme", "malformed-sqlite"],
)
@pytest.mark.parametrize("command", ["sessions", "verify", "stats"])
def test_a_failing_command_names_the_ledger_without_its_passwords(command: str, url: str) -> None:
    done = thoughtledger(command, "--db", url)
    assert done.returncode in (1, 2)
    assert done.stderr.startswith("thoughtledger: error: ")
    assert "***" in done.stderr  # the URL is still named, masked
    assert not [secret for secret in SECRETS if secret in done.stderr + done.stdout]


@pytest.mark.parametrize("option", ["sslpassword", "sslmode", "no_such_option"])
def test_an_option_the_driver_does_not_take_is_refused_by_name_without_its_value(
    option: str,
) -> None:
    url = f"postgresql://agent@127.0.0.1:1/none?{option}={SECRETS[1]}"
    done = thoughtledger("sessions", "--db", url)
    assert done.returncode == 2
    assert done.stderr.startswith(f"thoughtledger: error: unknown PostgreSQL URL option '{option}'")
    assert done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr
    assert SECRETS[1] not in done.stderr + done.stdout
