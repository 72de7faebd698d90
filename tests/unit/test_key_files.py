"""Development keys are generated once into the data folder, readable by their owner only,
and the same key is read back afterwards (every process of `make run` signs and decrypts with
the same one)."""

from __future__ import annotations

import stat
import threading
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


def test_a_process_racing_the_first_never_reads_a_half_written_key(tmp_path: Path) -> None:
    """Two of gunicorn's workers booting together: one still making its key while the other
    looks. Each ends with the same whole key; none reads an empty or partial file (the
    embedded test server's second worker once read a signing key that was not written yet)."""
    path = tmp_path / "a.key"
    slow_started, fast_done = threading.Event(), threading.Event()
    found: dict[str, bytes] = {}

    def slow() -> bytes:
        slow_started.set()
        assert fast_done.wait(10)  # the other process looks meanwhile
        return b"slow-key"

    def first() -> None:
        found["first"] = generated_once(path, slow)

    racing = threading.Thread(target=first)
    racing.start()
    assert slow_started.wait(10)
    found["second"] = generated_once(path, lambda: b"fast-key")
    fast_done.set()
    racing.join(10)
    assert found == {"first": b"fast-key", "second": b"fast-key"}
    assert path.read_bytes() == b"fast-key"
    assert [p.name for p in tmp_path.iterdir()] == ["a.key"]  # no writes left behind
