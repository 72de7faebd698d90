"""The verifiable shuffle: deck = f(server seed, client seed), published in ``SHUFFLE.md``.

HMAC-SHA256 in counter mode gives a byte stream keyed by the server seed; 32-bit words from it
drive a Fisher-Yates shuffle of the canonical deck, with rejection sampling so every index is
exactly equally likely. The server commits to SHA-256(server seed) before play and reveals the
seed when the game ends, so anyone can re-derive the deck. Seeds come from ``secrets`` only.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Iterator, Sequence

from service.rules.cards import Card, canonical_deck

ALGORITHM = "hmac-sha256-fisher-yates/1"
#: Recorded instead of ALGORITHM when a certification game is given its deck outright.
CERTIFICATION_DECK = "certification-deck"

SEED_BYTES = 32
CLIENT_SEED_MAX = 64
_DOMAIN = b"vegas-solitaire/shuffle/1"
#: Redeals draw from their own stream, so no redeal ever reuses a word of the deal's shuffle.
_REDEAL_DOMAIN = b"vegas-solitaire/redeal/1"
_LABEL = re.compile(r"[a-z0-9-]{1,32}")
_WORD = 4
_WORD_RANGE = 1 << 32
_SEED_HEX = re.compile(r"[0-9a-f]{64}")


def new_server_seed() -> bytes:
    """A fresh 256-bit seed from the operating system's CSPRNG."""
    return secrets.token_bytes(SEED_BYTES)


def commitment(server_seed: bytes) -> str:
    """What the game publishes before play: SHA-256 of the raw seed bytes, lowercase hex."""
    return hashlib.sha256(server_seed).hexdigest()


def seed_matches(server_seed_hex: str, seed_commitment: str) -> bool:
    """True for the one spelling events record: 64 lowercase hex digits hashing to the
    commitment."""
    if _SEED_HEX.fullmatch(server_seed_hex) is None:
        return False
    seed = bytes.fromhex(server_seed_hex)
    return hmac.compare_digest(commitment(seed), seed_commitment)


def deck_commitment(deck: Sequence[Card], salt: bytes) -> str:
    """What a certification game given its deck commits to: SHA-256 of a fresh 32-byte salt
    (its server seed) followed by the codes in deal order separated by single spaces (ASCII),
    lowercase hex. Without the salt, a player near the end of a game could try every order of
    the few cards still unseen against the commitment."""
    if len(salt) != SEED_BYTES:
        raise ValueError("the salt is exactly 32 bytes")
    return hashlib.sha256(salt + " ".join(deck).encode("ascii")).hexdigest()


def deck_matches(deck: Sequence[Card], salt_hex: str, seed_commitment: str) -> bool:
    """True when the revealed deck and salt (64 lowercase hex digits) hash to the commitment."""
    if _SEED_HEX.fullmatch(salt_hex) is None:
        return False
    return hmac.compare_digest(deck_commitment(deck, bytes.fromhex(salt_hex)), seed_commitment)


def check_client_seed(client_seed: str) -> None:
    """Client seeds are 1-64 printable ASCII characters, so every implementation encodes them
    the same way."""
    if not 1 <= len(client_seed) <= CLIENT_SEED_MAX or not all(
        " " <= ch <= "~" for ch in client_seed
    ):
        raise ValueError("a client seed is 1 to 64 printable ASCII characters")


def _words(server_seed: bytes, client_seed: str, label: str | None = None) -> Iterator[int]:
    """Big-endian unsigned 32-bit words of HMAC-SHA256(seed, domain 00 client 00 counter), or
    for a redeal HMAC-SHA256(seed, redeal domain 00 client 00 label 00 counter)."""
    if label is None:
        prefix = _DOMAIN + b"\x00" + client_seed.encode("ascii") + b"\x00"
    else:
        prefix = b"\x00".join((_REDEAL_DOMAIN, client_seed.encode("ascii"), label.encode(), b""))
    counter = 0
    while True:
        block = hmac.new(server_seed, prefix + counter.to_bytes(8, "big"), hashlib.sha256).digest()
        for i in range(0, len(block), _WORD):
            yield int.from_bytes(block[i : i + _WORD], "big")
        counter += 1


def uniform_below(words: Iterator[int], n: int) -> int:
    """An integer in [0, n) with no modulo bias: words at or above the largest multiple of n
    that fits in 32 bits are thrown away and the next word is tried."""
    limit = _WORD_RANGE - _WORD_RANGE % n
    for word in words:
        if word < limit:
            return word % n
    raise AssertionError("the word stream is endless")  # pragma: no cover


def _fisher_yates(cards: list[Card], words: Iterator[int]) -> tuple[Card, ...]:
    """Shuffle in place: for i from the last position down to 1, swap i with a uniform j <= i."""
    for i in range(len(cards) - 1, 0, -1):
        j = uniform_below(words, i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return tuple(cards)


def derive_deck(
    server_seed: bytes, client_seed: str | None = None, decks: int = 1
) -> tuple[Card, ...]:
    """The ``decks`` x 52 cards in deal order for this seed pair (``None`` client seed = empty
    string). One deck shuffles the canonical deck; two shuffle two canonical decks in a row."""
    if len(server_seed) != SEED_BYTES:
        raise ValueError("the server seed is exactly 32 bytes")
    if client_seed is not None:
        check_client_seed(client_seed)
    return _fisher_yates(list(canonical_deck(decks)), _words(server_seed, client_seed or ""))


def redeal(
    server_seed: bytes, client_seed: str | None, label: str, cards: Sequence[Card]
) -> tuple[Card, ...]:
    """A redeal's shuffle: ``cards`` (in the order the game gathered them) shuffled by the
    same Fisher-Yates, driven by the word stream of the game's seed pair and the redeal's
    ``label`` (``redeal-1``, ``redeal-2``). Deterministic, so the audit re-derives it."""
    if len(server_seed) != SEED_BYTES:
        raise ValueError("the server seed is exactly 32 bytes")
    if _LABEL.fullmatch(label) is None:
        raise ValueError("a redeal label is 1 to 32 of a-z, 0-9 and -")
    if client_seed is not None:
        check_client_seed(client_seed)
    return _fisher_yates(list(cards), _words(server_seed, client_seed or "", label))


def redealer(
    server_seed: bytes, client_seed: str | None
) -> Callable[[str, Sequence[Card]], tuple[Card, ...]]:
    """The redeal shuffle of one game, as the rules ask for it: (label, cards) -> shuffled."""
    return lambda label, cards: redeal(server_seed, client_seed, label, cards)
