"""Anchored history: signed checkpoints of the whole event log.

Each stream's hash chain (events.chain) shows an event edited in place, but not a stream deleted
whole, a stream's tail cut off, or a stream rewritten and re-hashed consistently by someone who
can write the table. A checkpoint closes those gaps. It covers the log up to a position and
records, signed with an Ed25519 key the database never holds:

- ``events``: how many events the log holds up to that position;
- ``log_hash``: a running SHA-256 over every event in position order (below);
- ``heads_digest``: SHA-256 over the head (version and hash) of every stream that changed since
  the previous checkpoint, so the audit can name the stream that was cut or rewritten;
- ``previous_log_hash`` and ``previous_position``: the checkpoint before it, chaining them.

The running hash starts at 64 zeros (GENESIS) and takes each event in position order:

    log_hash = SHA-256( log_hash "\\n" position "\\n" stream id "\\n" version "\\n" event hash )

(ASCII, hex digests). The heads digest is SHA-256 over one line per stream, sorted by stream id:
``stream id " " version " " hash "\\n"``. The signed message is the checkpoint's fields as
canonical JSON (events.chain.canonical_json: sorted keys, no whitespace, ASCII); the signature
is Ed25519 over those bytes, in standard base64. service/services/ANCHORS.md shows how an auditor
checks an exported checkpoint with nothing but its file and the published public key.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from events.chain import GENESIS
from events.json_text import canonical_json

FORMAT = "vegas-solitaire/checkpoint/1"

#: One event as the running hash sees it: (position, stream id, version, hash).
LogEntry = tuple[int, str, int, str]
#: A stream's head as a checkpoint records it: (stream id, version, hash).
Head = tuple[str, int, str]


def step(log_hash: str, entry: LogEntry) -> str:
    """The running hash after one more event."""
    position, stream_id, version, event_hash = entry
    line = f"{log_hash}\n{position}\n{stream_id}\n{version}\n{event_hash}"
    return hashlib.sha256(line.encode("ascii")).hexdigest()


def extend(log_hash: str, entries: Iterable[LogEntry]) -> tuple[str, int]:
    """The running hash after ``entries`` (in position order), and how many there were."""
    count = 0
    for entry in entries:
        log_hash = step(log_hash, entry)
        count += 1
    return log_hash, count


def heads_digest(heads: Iterable[Head]) -> str:
    """SHA-256 over the streams' heads, one line each, sorted by stream id."""
    digest = hashlib.sha256()
    for stream_id, version, event_hash in sorted(heads):
        digest.update(f"{stream_id} {version} {event_hash}\n".encode("ascii"))
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """What a checkpoint asserts about the log; exactly the signed fields."""

    seq: int
    position: int
    events: int
    log_hash: str
    previous_position: int
    previous_log_hash: str
    streams: int
    heads_digest: str
    created_at: str
    key_id: str
    format: str = FORMAT

    def message(self) -> bytes:
        """The bytes the signature covers."""
        return canonical_json(asdict(self)).encode("ascii")

    @classmethod
    def from_message(cls, message: str | bytes) -> Checkpoint:
        """Parse signed bytes back (ValueError if they are not a checkpoint of this format)."""
        try:
            fields = json.loads(message)
            checkpoint = cls(**fields)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not a checkpoint: {exc}") from exc
        if checkpoint.format != FORMAT:
            raise ValueError(f"unknown checkpoint format {checkpoint.format!r}")
        return checkpoint


#: The checkpoint before the first: the empty log.
START = (0, GENESIS)


def key_id(public_key: Ed25519PublicKey) -> str:
    """A short, non-secret name for a key: the first 16 hex digits of SHA-256 over its raw
    32 bytes."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def public_pem(public_key: Ed25519PublicKey) -> str:
    return public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode("ascii")


def load_public_keys(pem_text: str) -> dict[str, Ed25519PublicKey]:
    """Every Ed25519 public key in a PEM bundle, by key id (ValueError if one is not)."""
    keys: dict[str, Ed25519PublicKey] = {}
    marker = "-----END PUBLIC KEY-----"
    for block in pem_text.split(marker):
        if "-----BEGIN PUBLIC KEY-----" not in block:
            continue
        loaded = serialization.load_pem_public_key((block.strip() + "\n" + marker).encode())
        if not isinstance(loaded, Ed25519PublicKey):
            raise ValueError("an anchor public key must be Ed25519")
        keys[key_id(loaded)] = loaded
    return keys


class Signer:
    """Signs checkpoints with one Ed25519 private key."""

    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._key = private_key
        self.public_key = private_key.public_key()
        self.key_id = key_id(self.public_key)

    @classmethod
    def from_pem(cls, pem: bytes) -> Signer:
        loaded = serialization.load_pem_private_key(pem, password=None)
        if not isinstance(loaded, Ed25519PrivateKey):
            raise ValueError("the anchor signing key must be an Ed25519 private key")
        return cls(loaded)

    def sign(self, checkpoint: Checkpoint) -> str:
        return base64.b64encode(self._key.sign(checkpoint.message())).decode("ascii")


def new_private_pem() -> bytes:
    """A fresh Ed25519 private key as unencrypted PKCS#8 PEM (what openssl genpkey writes)."""
    return Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def signature_holds(
    message: bytes, signature: str, public_keys: Mapping[str, Ed25519PublicKey], key: str
) -> bool:
    """Whether ``signature`` is the named key's signature of ``message`` (False for a key not
    trusted, or a signature that is not base64)."""
    public_key = public_keys.get(key)
    if public_key is None:
        return False
    try:
        public_key.verify(base64.b64decode(signature, validate=True), message)
    except (InvalidSignature, ValueError):
        return False
    return True


def export(checkpoint: Checkpoint, signature: str, public_key: Ed25519PublicKey) -> dict[str, Any]:
    """The small JSON document an auditor stores elsewhere: the signed fields, the signature,
    and (for convenience only: check it against the published key) the signer's public key."""
    return {
        "checkpoint": asdict(checkpoint),
        "signature": signature,
        "public_key": public_pem(public_key),
    }


def verify_document(
    document: Mapping[str, Any], public_keys: Mapping[str, Ed25519PublicKey]
) -> Checkpoint:
    """The checkpoint an exported document holds, if its signature holds under one of
    ``public_keys`` (never the key the document carries); ValueError saying why not."""
    try:
        checkpoint = Checkpoint(**document["checkpoint"])
        signature = document["signature"]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not an exported checkpoint: {exc}") from exc
    if checkpoint.format != FORMAT:
        raise ValueError(f"unknown checkpoint format {checkpoint.format!r}")
    if not isinstance(signature, str):
        raise ValueError("signature: not a string")
    if checkpoint.key_id not in public_keys:
        raise ValueError(f"signed by key {checkpoint.key_id}, which is not a trusted key")
    if not signature_holds(checkpoint.message(), signature, public_keys, checkpoint.key_id):
        raise ValueError("the signature does not hold: the checkpoint was altered or forged")
    return checkpoint
