"""Development keys are generated once into the data folder, readable by their owner only,
and the same key is read back afterwards (every process of `make run` signs and decrypts with
the same one)."""

from __future__ import annotations

import stat
from pathlib import Path

from events.anchor import Signer
from service.runtime.key_files import generated_once
from service.services.checkpoints import embedded_signing_key
from service.services.seed_vault import SeedVault, embedded_key


def test_a_key_is_made_once_and_kept_private(tmp_path: Path) -> None:
    made: list[bytes] = []

    def make() -> bytes:
        made.append(b"key-%d" % len(made))
        return made[-1]

    path = tmp_path / "folder" / "a.key"
    assert generated_once(path, make) == b"key-0"
    assert generated_once(path, make) == b"key-0"
    assert made == [b"key-0"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_embedded_seed_and_signing_keys_are_usable_and_stable(tmp_path: Path) -> None:
    signer = Signer.from_pem(embedded_signing_key(tmp_path))
    assert Signer.from_pem(embedded_signing_key(tmp_path)).key_id == signer.key_id
    vault = SeedVault([embedded_key(tmp_path)])
    assert SeedVault([embedded_key(tmp_path)]).decrypt(vault.encrypt(b"seed")) == b"seed"
