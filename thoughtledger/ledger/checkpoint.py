"""Signed checkpoints of the log's Merkle tree, in the transparency-log formats.

A checkpoint (C2SP ``tlog-checkpoint``) names the log (its *origin*), the tree size and the root
hash, one per line; it is signed as a C2SP ``signed-note``: the text, a blank line, then one
line per signature, ``— <key name> <base64(key id || signature)>``. The key id is the first four
bytes of ``SHA-256(name || 0x0A || 0x01 || public key)`` and keys are written as the Go ``note``
package writes them (``PRIVATE+KEY+<name>+<hex id>+<base64(0x01 || seed)>`` and
``<name>+<hex id>+<base64(0x01 || public key)>``), so witnesses and tools of the transparency-log
ecosystem read both. Ed25519 comes from the ``cryptography`` package; nothing here is a
cryptographic primitive of its own.
"""

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass

from thoughtledger.ledger.errors import IntegrityError, InvalidInputError
from thoughtledger.ledger.merkle import HASH_SIZE

ED25519 = 0x01
"""The signature type byte of Ed25519 keys in signed notes."""

_DASH = "\u2014 "
_NAME = re.compile(r"[^\s+]+")
_MAX_NOTE = 64 * 1024


def _key_id(name: str, public: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + bytes([ED25519]) + public).digest()[:4]


def _check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise InvalidInputError(f"a key name has no spaces or '+' and is not empty: {name!r}")
    return name


def _decode_key(text: str, parts: int, kind: str) -> list[str]:
    # The base64 key itself may hold '+': it is the last field, so split no further.
    fields = text.strip().split("+", parts - 1)
    if len(fields) != parts:
        raise InvalidInputError(f"not a {kind} key (name+id+key)")
    return fields


def _b64(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidInputError(f"{what} is not base64") from exc


@dataclass(frozen=True, slots=True)
class Verifier:
    """A public key that checks signatures on notes (a checkpoint's).

    Attributes:
        name: The key's name, as signature lines name it.
        public: The Ed25519 public key (32 bytes).
    """

    name: str
    public: bytes

    @property
    def key_id(self) -> bytes:
        """The four bytes that tag this key's signatures."""
        return _key_id(self.name, self.public)

    def encode(self) -> str:
        """Return the key as a line of text: ``<name>+<hex id>+<base64(0x01 || key)>``."""
        key = base64.b64encode(bytes([ED25519]) + self.public).decode()
        return f"{self.name}+{self.key_id.hex()}+{key}"

    @classmethod
    def parse(cls, text: str) -> "Verifier":
        """Read a key :meth:`encode` wrote.

        Raises:
            InvalidInputError: Not such a key, or its id does not match it.
        """
        name, key_id, key = _decode_key(text, 3, "public")
        raw = _b64(key, "the public key")
        if len(raw) != 33 or raw[0] != ED25519:
            raise InvalidInputError("not an Ed25519 public key")
        verifier = cls(_check_name(name), raw[1:])
        if verifier.key_id.hex() != key_id.lower():
            raise InvalidInputError("the public key's id does not match the key")
        return verifier

    def verify(self, note: str) -> str:
        """Return the text of ``note`` if this key signed it.

        Raises:
            InvalidInputError: ``note`` is not a signed note.
            IntegrityError: No signature on it by this key verifies.
        """
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        text, signatures = split_note(note)
        key = Ed25519PublicKey.from_public_bytes(self.public)
        named = False
        for name, blob in signatures:
            if name != self.name or blob[:4] != self.key_id:
                continue
            named = True
            try:
                key.verify(blob[4:], text.encode())
            except InvalidSignature:
                continue
            return text
        if named:
            raise IntegrityError(f"the signature by {self.name} does not verify: altered or forged")
        # Name and id: two keys made with the default name share the name alone.
        mine = f"{self.name}+{self.key_id.hex()}"
        found = ", ".join(f"{name}+{blob[:4].hex()}" for name, blob in signatures)
        raise IntegrityError(
            f"the note carries no signature by the key {mine}"
            + (f" (it is signed by {found})" if found else "")
        )


@dataclass(frozen=True, slots=True)
class Signer:
    """A private key that signs notes. Keep it secret: it vouches for the log.

    Attributes:
        name: The key's name, written on every signature line.
        seed: The Ed25519 private key (its 32-byte seed).
    """

    name: str
    seed: bytes

    @classmethod
    def generate(cls, name: str) -> "Signer":
        """Make a new key named ``name``.

        Raises:
            InvalidInputError: The name is empty or holds a space or '+'.
        """
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        seed = Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )
        return cls(_check_name(name), seed)

    def verifier(self) -> Verifier:
        """Return the public half of this key."""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        public = (
            Ed25519PrivateKey.from_private_bytes(self.seed)
            .public_key()
            .public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        )
        return Verifier(self.name, public)

    def encode(self) -> str:
        """Return the key as a line of text (``PRIVATE+KEY+<name>+<hex id>+<base64>``)."""
        key = base64.b64encode(bytes([ED25519]) + self.seed).decode()
        return f"PRIVATE+KEY+{self.name}+{self.verifier().key_id.hex()}+{key}"

    @classmethod
    def parse(cls, text: str) -> "Signer":
        """Read a key :meth:`encode` wrote.

        Raises:
            InvalidInputError: Not such a key, or its id does not match it.
        """
        fields = _decode_key(text, 5, "private")
        if fields[:2] != ["PRIVATE", "KEY"]:
            raise InvalidInputError("not a private key (PRIVATE+KEY+name+id+key)")
        raw = _b64(fields[4], "the private key")
        if len(raw) != 33 or raw[0] != ED25519:
            raise InvalidInputError("not an Ed25519 private key")
        signer = cls(_check_name(fields[2]), raw[1:])
        if signer.verifier().key_id.hex() != fields[3].lower():
            raise InvalidInputError("the private key's id does not match the key")
        return signer

    def sign(self, text: str) -> str:
        """Return ``text`` signed: a signed note with this key's one signature.

        Raises:
            InvalidInputError: ``text`` does not end with a newline or holds a blank line.
        """
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        if not text.endswith("\n") or "\n\n" in text:
            raise InvalidInputError("a note's text ends with a newline and has no blank line")
        signature = Ed25519PrivateKey.from_private_bytes(self.seed).sign(text.encode())
        blob = base64.b64encode(self.verifier().key_id + signature).decode()
        return f"{text}\n{_DASH}{self.name} {blob}\n"


def split_note(note: str) -> tuple[str, list[tuple[str, bytes]]]:
    """Split a signed note into its text and its signatures ``(key name, id || signature)``.

    Raises:
        InvalidInputError: Not a signed note.
    """
    if len(note) > _MAX_NOTE:
        raise InvalidInputError("a signed note is at most 64 KiB")
    cut = note.rfind("\n\n")
    if cut < 0 or not note.endswith("\n"):
        raise InvalidInputError("not a signed note (its text, a blank line, then signatures)")
    text = note[: cut + 1]
    signatures: list[tuple[str, bytes]] = []
    for line in note[cut + 2 : -1].split("\n"):
        if not line.startswith(_DASH) or line.count(" ") != 2:
            raise InvalidInputError(f"not a signature line: {line[:60]!r}")
        name, blob = line[len(_DASH) :].split(" ")
        raw = _b64(blob, "a signature")
        if len(raw) < 5:
            raise InvalidInputError("a signature line is too short")
        signatures.append((name, raw))
    return text, signatures


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A statement of the log: its first ``size`` events hash to ``root``.

    Attributes:
        origin: The log's name (C2SP: a unique identifier, like a schema-less URL).
        size: The tree size.
        root: The root hash (32 bytes).
    """

    origin: str
    size: int
    root: bytes

    def text(self) -> str:
        """Return the checkpoint's body: origin, size and base64 root, one per line."""
        return f"{self.origin}\n{self.size}\n{base64.b64encode(self.root).decode()}\n"

    def sign(self, signer: Signer) -> str:
        """Return this checkpoint as a note signed by ``signer``.

        Raises:
            InvalidInputError: The origin is empty or spans lines.
        """
        if not self.origin or "\n" in self.origin:
            raise InvalidInputError("a checkpoint's origin is one non-empty line")
        return signer.sign(self.text())

    @classmethod
    def parse(cls, text: str) -> "Checkpoint":
        """Read a checkpoint's body (extension lines after the root are ignored).

        Raises:
            InvalidInputError: Not a checkpoint.
        """
        lines = text.split("\n")
        if len(lines) < 4 or not lines[0] or lines[-1] != "":
            raise InvalidInputError("not a checkpoint (origin, size and root, one per line)")
        size = lines[1]
        if not size.isascii() or not size.isdigit() or (size != "0" and size.startswith("0")):
            raise InvalidInputError(f"a checkpoint's tree size is a decimal number: {size!r}")
        root = _b64(lines[2], "the checkpoint's root hash")
        if len(root) != HASH_SIZE:
            raise InvalidInputError("a checkpoint's root hash is 32 bytes")
        return cls(lines[0], int(size), root)

    @classmethod
    def open(cls, note: str, verifier: Verifier) -> "Checkpoint":
        """Return the checkpoint a signed note holds, once ``verifier``'s signature on it checks.

        Raises:
            InvalidInputError: Not a signed checkpoint.
            IntegrityError: It is not signed by that key, or the signature does not verify.
        """
        return cls.parse(verifier.verify(note))


__all__ = ["ED25519", "Checkpoint", "Signer", "Verifier", "split_note"]
