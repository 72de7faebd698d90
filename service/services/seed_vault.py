"""Server seeds at rest: encrypted with Fernet (AES-128-CBC + HMAC-SHA256) until the game ends.

Keys come from configuration (SEED_ENCRYPTION_KEYS, comma-separated: the first encrypts, all
decrypt, so keys can be rotated). In embedded mode a key is generated into the data folder on
first run and reused after."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Sequence
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from service.runtime.key_files import generated_once
from service.services.unit_of_work import UnitOfWork

KEY_FILE = "seed-encryption.key"


class SeedVault:
    def __init__(self, keys: Sequence[str]) -> None:
        if not keys:
            raise ValueError("at least one seed encryption key is needed")
        self._fernet = MultiFernet([Fernet(k.encode()) for k in keys])
        # A short, non-secret name for the encrypting key, recorded beside each ciphertext.
        self.key_id = hashlib.sha256(keys[0].encode()).hexdigest()[:16]
        # A key of its own for MACs (of snapshot rows), derived from the newest key.
        self._mac_key = hashlib.sha256(b"vegas-mac\0" + keys[0].encode()).digest()

    def mac(self, message: bytes) -> str:
        """HMAC-SHA256 of ``message`` under the service's key: what the service itself wrote
        can be told from anything else in its database."""
        return hmac.new(self._mac_key, message, hashlib.sha256).hexdigest()

    def check_mac(self, message: bytes, mac: str) -> bool:
        return hmac.compare_digest(self.mac(message), mac)

    def encrypt(self, seed: bytes) -> bytes:
        return self._fernet.encrypt(seed)

    def rotate(self, token: bytes) -> bytes:
        """The same secret re-encrypted under the newest key (decrypted with any)."""
        try:
            return self._fernet.rotate(token)
        except InvalidToken as exc:
            raise ValueError("a stored seed cannot be decrypted with the configured keys") from exc

    def decrypt(self, token: bytes) -> bytes:
        try:
            return self._fernet.decrypt(token)
        except InvalidToken as exc:
            raise ValueError("a stored seed cannot be decrypted with the configured keys") from exc


def embedded_key(data_dir: Path) -> str:
    """The key kept in the data folder, generated if missing."""
    return generated_once(data_dir / KEY_FILE, Fernet.generate_key).decode().strip()


def rotate_keys(vault: SeedVault, unit_of_work: Callable[[], UnitOfWork], batch: int = 500) -> int:
    """Re-encrypt every sealed secret not yet under the vault's newest key (the first of
    SEED_ENCRYPTION_KEYS), a batch per transaction; how many were re-encrypted. Afterwards the
    older keys may be dropped from the configuration."""
    done = 0
    while True:
        with unit_of_work() as uow:
            stale = uow.seeds.stale(vault.key_id, batch)
            for game_id, token in stale:
                uow.seeds.rekey(game_id, vault.key_id, vault.rotate(token))
            uow.commit()
        done += len(stale)
        if len(stale) < batch:
            return done
