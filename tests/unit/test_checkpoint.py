"""Signed checkpoints: the signed-note format, byte for byte as the Go reference writes it."""

import base64

import pytest

from thoughtledger.ledger.checkpoint import Checkpoint, Signer, Verifier, split_note
from thoughtledger.ledger.errors import IntegrityError, InvalidInputError

# The example key and note of golang.org/x/mod/sumdb/note (its note_test.go).
GO_VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
GO_SKEY = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
GO_TEXT = (
    "If you think cryptography is the answer to your problem,\n"
    "then you don't know what your problem is.\n"
)
GO_NOTE = (
    GO_TEXT + "\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FF"
    "YC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"
)


def test_signing_reproduces_the_reference_note_byte_for_byte() -> None:
    signer = Signer.parse(GO_SKEY)
    assert signer.encode() == GO_SKEY
    assert signer.verifier().encode() == GO_VKEY
    assert signer.sign(GO_TEXT) == GO_NOTE
    assert Verifier.parse(GO_VKEY).verify(GO_NOTE) == GO_TEXT


def test_an_altered_note_or_another_key_does_not_verify() -> None:
    verifier = Verifier.parse(GO_VKEY)
    with pytest.raises(IntegrityError, match="does not verify"):
        verifier.verify(GO_NOTE.replace("cryptography", "cryptographY"))
    other = Signer.generate("PeterNeumann").verifier()
    with pytest.raises(IntegrityError, match="no signature by the key"):
        other.verify(GO_NOTE)
    with pytest.raises(IntegrityError, match="no signature by the key"):
        Signer.generate("someone").verifier().verify(GO_NOTE)


@pytest.mark.parametrize(
    "key",
    [
        "",
        "PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10T",
        "PeterNeumann+c74f20a3+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        "Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        GO_SKEY,
    ],
)
def test_a_malformed_public_key_is_refused(key: str) -> None:
    with pytest.raises(InvalidInputError):
        Verifier.parse(key)


def test_a_checkpoint_round_trips_through_its_signed_note() -> None:
    signer = Signer.generate("ledger.example/log")
    checkpoint = Checkpoint("ledger.example/log", 1234, bytes(range(32)))
    note = checkpoint.sign(signer)
    origin, size, root, blank, signature, end = note.split("\n")
    assert (origin, size, blank, end) == ("ledger.example/log", "1234", "", "")
    assert base64.b64decode(root) == bytes(range(32))
    assert signature.startswith("\u2014 ledger.example/log ")
    assert Checkpoint.open(note, signer.verifier()) == checkpoint
    text, signatures = split_note(note)
    assert text == checkpoint.text()
    assert [name for name, _ in signatures] == ["ledger.example/log"]


@pytest.mark.parametrize(
    "text",
    ["", "origin\n", "origin\n12\n", "origin\n012\nAAAA\n", "origin\nx\nAAAA\n", "o\n1\nAAAA\n"],
)
def test_a_malformed_checkpoint_is_refused(text: str) -> None:
    with pytest.raises(InvalidInputError):
        Checkpoint.parse(text)


def test_a_changed_size_or_root_breaks_the_signature() -> None:
    signer = Signer.generate("log")
    note = Checkpoint("log", 10, bytes(32)).sign(signer)
    for forged in (note.replace("\n10\n", "\n11\n"), note.replace("AAAA", "AAAB", 1)):
        with pytest.raises(IntegrityError):
            Checkpoint.open(forged, signer.verifier())
