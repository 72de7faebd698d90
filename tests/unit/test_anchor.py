"""The checkpoint format (events/anchor.py) and the log's verification against checkpoints
(service/core/log_verification.py), pure: no database."""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from events.anchor import (
    START,
    Checkpoint,
    LogEntry,
    Signer,
    export,
    extend,
    heads_digest,
    load_public_keys,
    new_private_pem,
    public_pem,
    verify_document,
)
from events.chain import GENESIS
from service.core.log_verification import Anchored, verify_log

H = "ab" * 32


def entries(n: int) -> list[LogEntry]:
    """n events over three streams, in position order (position 4 rolled back: a gap)."""
    out: list[LogEntry] = []
    versions: dict[str, int] = {}
    position = 0
    while len(out) < n:
        position += 1
        if position == 4:
            continue
        stream = f"game-{position % 3}"
        versions[stream] = versions.get(stream, 0) + 1
        digest = hashlib.sha256(f"{stream}{versions[stream]}".encode()).hexdigest()
        out.append((position, stream, versions[stream], digest))
    return out


def test_the_running_hash_is_the_documented_formula() -> None:
    log = entries(2)
    (p1, s1, v1, h1), (p2, s2, v2, h2) = log
    first = hashlib.sha256(f"{GENESIS}\n{p1}\n{s1}\n{v1}\n{h1}".encode()).hexdigest()
    second = hashlib.sha256(f"{first}\n{p2}\n{s2}\n{v2}\n{h2}".encode()).hexdigest()
    assert extend(GENESIS, log) == (second, 2)
    assert extend(GENESIS, log[:1]) == (first, 1)
    assert extend(extend(GENESIS, log[:1])[0], log[1:]) == (second, 1)  # extends in stretches
    assert extend(GENESIS, reversed(log))[0] != second  # order is part of it


def test_the_heads_digest_is_over_sorted_lines() -> None:
    heads = [("game-b", 3, H), ("game-a", 7, H)]
    lines = f"game-a 7 {H}\ngame-b 3 {H}\n"
    assert heads_digest(heads) == hashlib.sha256(lines.encode()).hexdigest()
    assert heads_digest(reversed(heads)) == heads_digest(heads)


def checkpoint(signer: Signer, seq: int = 1, **changes: object) -> Checkpoint:
    made = Checkpoint(
        seq=seq,
        position=10,
        events=9,
        log_hash=H,
        previous_position=0,
        previous_log_hash=GENESIS,
        streams=3,
        heads_digest=H,
        created_at="2026-11-23T22:00:00.000000Z",
        key_id=signer.key_id,
    )
    return replace(made, **changes)  # type: ignore[arg-type]


def test_a_signed_checkpoint_verifies_only_under_a_trusted_key_and_unaltered() -> None:
    signer = Signer.from_pem(new_private_pem())
    other = Signer.from_pem(new_private_pem())
    made = checkpoint(signer)
    document = export(made, signer.sign(made), signer.public_key)
    trusted = load_public_keys(public_pem(signer.public_key))
    assert verify_document(document, trusted) == made
    assert Checkpoint.from_message(made.message()) == made

    with pytest.raises(ValueError, match="not a trusted key"):
        verify_document(document, load_public_keys(public_pem(other.public_key)))
    altered = {**document, "checkpoint": {**document["checkpoint"], "events": 8}}
    with pytest.raises(ValueError, match="does not hold"):
        verify_document(altered, trusted)
    # A forger who signs with their own key and names it is still refused.
    forged = checkpoint(other)
    with pytest.raises(ValueError, match="not a trusted key"):
        verify_document(export(forged, other.sign(forged), other.public_key), trusted)
    with pytest.raises(ValueError, match="unknown checkpoint format"):
        Checkpoint.from_message(replace(made, format="other/1").message())


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_openssl_verifies_an_exported_checkpoint_as_anchors_md_says(tmp_path: Path) -> None:
    """An auditor needs nothing of ours: the signed bytes are the checkpoint as canonical JSON
    and the signature is plain Ed25519 (service/services/ANCHORS.md)."""
    signer = Signer.from_pem(new_private_pem())
    made = checkpoint(signer)
    document = export(made, signer.sign(made), signer.public_key)
    (tmp_path / "key.pem").write_text(public_pem(signer.public_key))
    (tmp_path / "message").write_bytes(made.message())
    (tmp_path / "sig").write_bytes(base64.b64decode(document["signature"]))
    verify = [
        "openssl",
        "pkeyutl",
        "-verify",
        "-pubin",
        "-inkey",
        "key.pem",
        "-rawin",
        "-in",
        "message",
        "-sigfile",
        "sig",
    ]
    assert subprocess.run(verify, cwd=tmp_path, capture_output=True).returncode == 0
    (tmp_path / "message").write_bytes(made.message().replace(b'"events":9', b'"events":8'))
    assert subprocess.run(verify, cwd=tmp_path, capture_output=True).returncode != 0


def anchored_over(log: list[LogEntry], *cuts: int) -> list[Anchored]:
    """Checkpoints signed after each cut (a count of events), with their stretch's heads."""
    signer = Signer.from_pem(new_private_pem())
    made: list[Anchored] = []
    previous = START
    done = 0
    for seq, cut in enumerate(cuts, start=1):
        stretch = log[done:cut]
        log_hash, _ = extend(previous[1], stretch)
        heads = {stream: (stream, version, h) for _, stream, version, h in stretch}
        position = stretch[-1][0]
        cp = checkpoint(
            signer,
            seq=seq,
            position=position,
            events=cut,
            log_hash=log_hash,
            previous_position=previous[0],
            previous_log_hash=previous[1],
            streams=len(heads),
            heads_digest=heads_digest(heads.values()),
        )
        made.append(Anchored(cp, sorted(heads.values())))
        previous, done = (position, log_hash), cut
    return made


def test_an_untouched_log_holds_against_every_checkpoint() -> None:
    log = entries(12)
    assert verify_log(anchored_over(log, 4, 9, 12), log) == []
    assert verify_log(anchored_over(log, 4, 9), log) == []  # events after the last: fine
    assert verify_log([], log) == []


def test_a_missing_event_is_placed_in_its_checkpoints_stretch_only() -> None:
    log = entries(12)
    anchors = anchored_over(log, 4, 9, 12)
    damaged = log[:6] + log[7:]  # the 7th event (in checkpoint 2's stretch) is gone
    found = verify_log(anchors, damaged)
    hashes = [f for f in found if f.check == "log-hash"]
    assert [f.location for f in hashes] == [f"checkpoint 2 (positions {log[3][0] + 1}-{log[8][0]})"]


def test_a_stream_cut_deleted_or_rewritten_is_named() -> None:
    log = entries(12)
    anchors = anchored_over(log, 12)
    last = {stream: (version, h) for _, stream, version, h in log}

    cut = [e for e in log if not (e[1] == "game-1" and e[2] == last["game-1"][0])]
    assert ("stream-truncated", "game-1") in {
        (f.check, f.location) for f in verify_log(anchors, cut)
    }

    gone = [e for e in log if e[1] != "game-2"]
    assert ("stream-deleted", "game-2") in {
        (f.check, f.location) for f in verify_log(anchors, gone)
    }

    version = last["game-0"][0]
    rewritten = [(p, s, v, "cd" * 32 if (s, v) == ("game-0", version) else h) for p, s, v, h in log]
    named = {(f.check, f.location) for f in verify_log(anchors, rewritten)}
    assert ("stream-rewritten", f"game-0 v{version}") in named
