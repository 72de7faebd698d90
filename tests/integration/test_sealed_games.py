"""Sealed until seen, through the real PostgreSQL: a card nobody has seen is in no event, view,
record or replay while the game is in progress; its secret (server seed, or the deck a
certification game was given) is kept encrypted and revealed by the ending event, after which
the game verifies in full."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import psycopg
import pytest

from events.catalog import GAME_EVENT_TYPES, Collected, Dealt, Voided
from events.records import NewEvent
from service.bootstrap import Container
from service.core import game_decider as g
from service.core import ledger, shuffle
from service.core.context import Actor
from service.core.game_verification import CHECKS, GameVerification, verify_game
from service.core.game_views import MASKED, full_view, player_view
from service.core.streams import game_stream
from service.services.games import Games, LoadedGame
from service.services.history_audits import stream_postings
from service.storage.projections import history_row
from tests.builders import SEED, pile
from tests.dbtools import SERVICE_ROLE
from tests.integration.conftest import OPERATOR, World, as_player

AUDITOR = Actor("auditor-1", "auditor")
ALL_PASS = dict.fromkeys(CHECKS, "pass")
#: Vegas's deal gives row r one card for each column r..6, the first face up: these indices.
VEGAS_FACE_UP = frozenset({0, 7, 13, 18, 22, 25, 27})


def _shown_and_hidden(variant: str, deck: Sequence[str], draws: int) -> tuple[set[str], set[str]]:
    """The stock cards ``draws`` draws have shown, and every card still unseen, worked out
    from the deck in deal order (not from the engine)."""
    if variant == "vegas-draw1":  # 21 face-down column cards, then 24 in the stock
        down = {deck[i] for i in range(28) if i not in VEGAS_FACE_UP}
        return set(deck[28 : 28 + draws]), down | set(deck[28 + draws :])
    if variant == "golf":  # 35 column cards face up, the next on the waste, 16 in the stock
        return set(deck[36 : 36 + draws]), set(deck[36 + draws :])
    if variant == "pyramid":  # 28 pyramid cards and the stock's top card face up
        return set(deck[28 : 29 + draws]), set(deck[29 + draws :])
    raise AssertionError(variant)


def _quoted(text: str) -> set[str]:
    """The card codes a JSON (or repr) text names, as quoted strings."""
    codes = {r + s for s in "SHDC" for r in "A23456789TJQK"}
    return {c for c in codes if f'"{c}"' in text or f"'{c}'" in text}


def _events_as_the_app_reads_them(container: Container, game_id: uuid.UUID) -> str:
    with container.unit_of_work() as uow:
        role = uow.conn.execute("SELECT session_user, current_user").fetchone()
        rows = uow.conn.execute(
            "SELECT data::text FROM events WHERE stream_id = %s ORDER BY version",
            (game_stream(game_id),),
        ).fetchall()
    assert role == (SERVICE_ROLE, "vegas_app")
    assert rows
    return "\n".join(str(r[0]) for r in rows)


def _secret(admin: psycopg.Connection[Any], game_id: uuid.UUID) -> tuple[str, bytes]:
    row = admin.execute(
        "SELECT kind, ciphertext FROM game_seeds WHERE game_id = %s", (game_id,)
    ).fetchone()
    assert row is not None
    return str(row[0]), bytes(row[1])


def _secret_of(container: Container, game_id: uuid.UUID) -> tuple[str, bytes]:
    """The stored secret as the service's own role reads it."""
    with container.unit_of_work() as uow:
        stored = uow.seeds.get(game_id)
    assert stored is not None
    return stored


def _verify(container: Container, game_id: uuid.UUID) -> GameVerification:
    records = container.games.records(game_id)
    with container.unit_of_work() as uow:
        postings = stream_postings(uow, game_stream(game_id))
    return verify_game(records, postings, container.settings.paytables)


def _everything_shown_in_play(container: Container, loaded: LoadedGame) -> str:
    """What anyone may read of an unfinished game: the player's and staff's views, the raw
    records staff see, the regulatory replay and the verification, all as text."""
    game_id = uuid.UUID(loaded.state.game_id)
    state = container.games.game(game_id).state
    records = container.games.shown_records(container.games.records(game_id))
    replay = container.audits.replay(game_id, AUDITOR)
    verification = _verify(container, game_id)
    shown = {
        "player": player_view(state),
        "staff": full_view(state),
        "records": [r.data for r in records],
        "steps": replay.steps,
        "final": replay.final,
        "outcome": replay.outcome,
        "checks": replay.verification.checks,
        "findings": [asdict(f) for f in replay.verification.findings],
    }
    return json.dumps(shown, default=str) + repr(state) + repr(verification)


def _draw(world: World, loaded: LoadedGame, times: int) -> LoadedGame:
    me = as_player(uuid.UUID(loaded.state.player_id))
    for _ in range(times):
        loaded = world.c.games.play(me, uuid.UUID(loaded.state.game_id), g.Draw())
    return loaded


@pytest.mark.parametrize("variant", ["vegas-draw1", "golf", "pyramid"])
def test_no_unseen_card_is_shown_anywhere_until_the_seed_is_revealed(
    world: World, admin_conn: psycopg.Connection[Any], variant: str
) -> None:
    player = world.player(balance=520)
    loaded = world.game(player, variant=variant)
    game_id = uuid.UUID(loaded.state.game_id)
    kind, ciphertext = _secret(admin_conn, game_id)
    assert kind == "seed"
    seed = world.c.vault.decrypt(ciphertext)
    deck = shuffle.derive_deck(seed)
    assert loaded.state.seed_commitment == shuffle.commitment(seed)

    for draws in (0, 3):
        loaded = _draw(world, loaded, draws)
        shown, hidden = _shown_and_hidden(variant, deck, draws)
        assert len(hidden) == {"vegas-draw1": 45, "golf": 16, "pyramid": 23}[variant] - draws
        events = _events_as_the_app_reads_them(world.c, game_id)
        assert shown <= _quoted(events)  # the cards drawn are there, named as cards are ...
        assert _quoted(events) & hidden == set()  # ... and no card nobody has seen
        table = loaded.state.table
        assert table is not None
        assert {s for s in table.slots() if isinstance(s, str)} & hidden == set()
        assert _quoted(_everything_shown_in_play(world.c, loaded)) & hidden == set()
        assert "deck" not in full_view(world.c.games.game(game_id).state)

    pending = _verify(world.c, game_id)
    assert pending.findings == []
    assert (pending.checks["seed-commitment"], pending.checks["deck"]) == ("pending", "pending")

    done = world.c.games.collect(as_player(player.player_id), game_id)
    collected = world.c.games.records(game_id)[-1].decode()
    assert isinstance(collected, Collected)
    assert (collected.server_seed, collected.deck) == (seed.hex(), None)
    assert done.state.server_seed == seed.hex()
    assert full_view(done.state)["deck"] == list(deck)
    verified = _verify(world.c, game_id)
    assert verified.findings == []
    assert verified.checks == ALL_PASS


@pytest.mark.parametrize("ending", ["collect", "void"])
def test_a_given_deck_is_kept_encrypted_and_revealed_by_the_ending(
    world: World, admin_conn: psycopg.Connection[Any], ending: str
) -> None:
    deck = shuffle.derive_deck(bytes(range(1, 33)))
    player = world.player(balance=520)
    loaded = world.game(player, deck=deck)
    game_id = uuid.UUID(loaded.state.game_id)
    assert loaded.state.certification
    commitment = loaded.state.seed_commitment
    assert commitment is not None
    assert loaded.state.revealed_deck is None

    dealt = world.c.games.records(game_id)[1].decode()
    assert isinstance(dealt, Dealt)
    assert (dealt.shuffle_algorithm, dealt.deck) == (shuffle.CERTIFICATION_DECK, None)
    kind, ciphertext = _secret(admin_conn, game_id)
    plain = world.c.vault.decrypt(ciphertext)
    salt, text = plain[: shuffle.SEED_BYTES], plain[shuffle.SEED_BYTES :]
    assert kind == "deck"
    assert text == " ".join(deck).encode("ascii")
    assert text not in ciphertext
    assert commitment == shuffle.deck_commitment(deck, salt)

    loaded = _draw(world, loaded, 2)
    shown, hidden = _shown_and_hidden("vegas-draw1", deck, 2)
    events = _events_as_the_app_reads_them(world.c, game_id)
    assert shown <= _quoted(events)
    assert _quoted(events) & hidden == set()
    assert _quoted(_everything_shown_in_play(world.c, loaded)) & hidden == set()

    if ending == "collect":
        done = world.c.games.collect(as_player(player.player_id), game_id)
    else:
        done = world.c.games.void(OPERATOR, game_id, "certification run stopped")
    last = world.c.games.records(game_id)[-1].decode()
    assert isinstance(last, Collected if ending == "collect" else Voided)
    assert last.deck == deck
    assert last.server_seed == salt.hex()
    assert done.state.revealed_deck == deck
    assert full_view(done.state)["deck"] == list(deck)
    verified = _verify(world.c, game_id)
    assert verified.findings == []
    assert verified.checks == ALL_PASS


@pytest.mark.parametrize("given", [False, True], ids=["seed", "deck"])
def test_a_service_with_nothing_cached_draws_from_the_decrypted_secret(
    container: Container, world: World, given: bool
) -> None:
    """Another process (nothing cached) re-derives the unseen cards from the stored secret."""
    player = world.player(balance=520)
    loaded = world.game(player, variant="golf", deck=shuffle.derive_deck(SEED) if given else None)
    game_id = uuid.UUID(loaded.state.game_id)
    kind, ciphertext = _secret_of(container, game_id)
    plain = container.vault.decrypt(ciphertext)
    assert kind == ("deck" if given else "seed")
    if given:
        deck = tuple(plain[shuffle.SEED_BYTES :].decode("ascii").split())
    else:
        deck = shuffle.derive_deck(plain)
    cold = Games(
        container.unit_of_work,
        dict(container.settings.paytables),
        container.vault,
        container.safer,
        certification_mode=True,
    )
    me = as_player(player.player_id)
    for _ in range(2):
        drawn = cold.play(me, game_id, g.Draw())
    assert pile(drawn.state, "waste").cards == deck[35:38]  # the deal's waste card, then two
    done = cold.collect(me, game_id)
    assert done.state.server_seed == (plain[: shuffle.SEED_BYTES] if given else plain).hex()
    assert done.state.revealed_deck == (deck if given else None)
    verified = _verify(container, game_id)
    assert verified.findings == []
    assert verified.checks == ALL_PASS


def _deal_as_before_sealing(
    container: Container,
    admin: psycopg.Connection[Any],
    player_id: uuid.UUID,
    deck: tuple[str, ...],
    seed: bytes | None,
) -> uuid.UUID:
    """A Vegas draw-one game in progress as the release before sealing wrote it: StakePlaced
    v1, Dealt v1 with the deck in clear, the stake posted, its history row, and (for a seeded
    game) its encrypted seed in a game_seeds row written before the kind column existed."""
    game_id = uuid.uuid4()
    stream = game_stream(game_id)
    placed = {
        "game_id": str(game_id),
        "player_id": str(player_id),
        "variant": "vegas-draw1",
        "draw_count": 1,
        "passes": 1,
        "stake": 520,
        "currency": "GBP",
        "win_rate": 50,
        "paytable_id": "vegas-gbp",
        "paytable_version": 1,
        "rules_version": "vegas-klondike/1",
        "certification": seed is None,
    }
    dealt = {
        "deck": list(deck),
        "shuffle_algorithm": shuffle.ALGORITHM if seed else shuffle.CERTIFICATION_DECK,
        "seed_commitment": shuffle.commitment(seed) if seed else None,
        "client_seed": None,
    }
    meta = {"actor": str(player_id), "role": "player", "request_id": str(uuid.uuid4())}
    with container.owner_unit_of_work() as uow:
        uow.lock_for_write()
        recorded = uow.events.append(
            stream,
            [NewEvent("StakePlaced", 1, placed, meta), NewEvent("Dealt", 1, dealt, meta)],
            0,
        )
        events = [r.decode() for r in recorded]
        entry = ledger.entry_for(events[0], stream, 1, str(player_id), str(game_id))
        assert entry is not None
        uow.ledger.post(entry)
        state = g.fold(e for e in events if isinstance(e, GAME_EVENT_TYPES))
        at = recorded[-1].recorded_at
        uow.projections.save_history([history_row(state, at, at, None)])
        uow.commit()
    if seed is not None:
        admin.execute(
            "INSERT INTO game_seeds (game_id, key_id, ciphertext) VALUES (%s, %s, %s)",
            (game_id, container.vault.key_id, container.vault.encrypt(seed)),
        )
    return game_id


@pytest.mark.parametrize("seeded", [True, False], ids=["seed", "given-deck"])
def test_a_game_dealt_before_sealing_is_played_masked_and_collected_after_the_upgrade(
    container: Container, world: World, admin_conn: psycopg.Connection[Any], seeded: bool
) -> None:
    seed = bytes(range(3, 35)) if seeded else None
    deck = shuffle.derive_deck(seed) if seed else shuffle.derive_deck(SEED)
    player = world.player(balance=520)
    game_id = _deal_as_before_sealing(container, admin_conn, player.player_id, deck, seed)
    if seeded:
        assert _secret(admin_conn, game_id)[0] == "seed"  # the migration's default kind
    me = as_player(player.player_id)
    cold = Games(
        container.unit_of_work,
        dict(container.settings.paytables),
        container.vault,
        container.safer,
        certification_mode=True,
    )
    loaded = cold.play(me, game_id, g.Draw())
    assert pile(loaded.state, "waste").cards == (deck[28],)
    loaded = world.c.games.play(me, game_id, g.Draw())
    assert pile(loaded.state, "waste").cards == deck[28:30]

    _, hidden = _shown_and_hidden("vegas-draw1", deck, 2)
    records = container.games.shown_records(container.games.records(game_id))
    replay = container.audits.replay(game_id, AUDITOR)
    state = container.games.game(game_id).state
    shown = json.dumps(
        [
            player_view(state),
            full_view(state),
            [r.data for r in records],
            replay.steps,
            replay.final,
        ],
        default=str,
    )
    assert _quoted(shown) & hidden == set()  # the deck recorded in clear stays masked
    assert records[1].data["deck"] == MASKED

    done = world.c.games.collect(me, game_id)
    assert (done.state.server_seed, done.state.revealed_deck) == (
        seed.hex() if seed else None,
        None,
    )
    assert container.games.records(game_id)[1].data["deck"] == list(deck)
    assert full_view(done.state)["deck"] == list(deck)
    assert world.balance(player) == 0
    verified = _verify(container, game_id)
    assert verified.findings == []
    assert verified.checks == (
        ALL_PASS
        if seeded
        else {**ALL_PASS, "seed-commitment": "not-applicable", "deck": "not-applicable"}
    )
