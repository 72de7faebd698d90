"""Verification against edited records: whoever can rewrite the events (and recompute the hash
chain) still cannot make an altered game pass, and a stream that cannot have happened is a
finding, never a crash."""

from __future__ import annotations

from dataclasses import replace

import pytest

from events.catalog import (
    CardDrawn,
    CardMoved,
    CardTurned,
    Collected,
    Dealt,
    GameEvent,
    StakePlaced,
)
from service.core import game_decider as g
from service.core import shuffle
from service.core.game_verification import verify_game
from service.core.paytable import default_paytables
from service.core.replay import build_replay
from tests.builders import SEED, easy_deck, play, postings_for, recorded, start

PAYTABLES = default_paytables()


def _finished_seeded_game() -> list[GameEvent]:
    game, events = start(seed=SEED)
    game, more = play(game, g.Draw(), g.Draw(), g.Collect(server_seed=SEED.hex()))
    return [*events, *more]


def _verify(events: list[GameEvent]) -> tuple[dict[str, str], list[str]]:
    result = verify_game(recorded("g1", events), postings_for("g1", events), PAYTABLES)
    return dict(result.checks), [f.check for f in result.findings]


def test_an_honest_game_passes_every_check() -> None:
    checks, findings = _verify(_finished_seeded_game())
    assert set(checks.values()) == {"pass"}
    assert findings == []


def test_a_drawn_card_changed_is_a_deck_finding_even_with_the_chain_rewritten() -> None:
    events = _finished_seeded_game()
    i = next(i for i, e in enumerate(events) if isinstance(e, CardDrawn))
    drawn = events[i]
    assert isinstance(drawn, CardDrawn)
    other = next(c for c in shuffle.derive_deck(SEED) if c != drawn.cards[0])
    events[i] = replace(drawn, cards=(other,))
    checks, findings = _verify(events)
    assert checks["deck"] == "fail"
    assert "deck" in findings


def test_a_commitment_removed_from_a_sealed_deal_is_a_finding() -> None:
    """Only a deal recorded before sealing (its deck in clear) may lack a commitment."""
    events = _finished_seeded_game()
    dealt, ending = events[1], events[-1]
    assert isinstance(dealt, Dealt)
    assert isinstance(ending, Collected)
    events[1] = replace(dealt, seed_commitment=None)
    events[-1] = replace(ending, server_seed=None)
    checks, findings = _verify(events)
    # The sealed deal without a commitment is not a valid record: nothing after it is trusted.
    assert (checks["rules"], checks["seed-commitment"], checks["deck"]) == (
        "fail",
        "pending",
        "pending",
    )
    assert findings == ["rules"]


def test_a_real_money_game_relabelled_as_a_given_deck_is_a_finding() -> None:
    events = _finished_seeded_game()
    dealt, ending = events[1], events[-1]
    assert isinstance(dealt, Dealt)
    assert isinstance(ending, Collected)
    forged = shuffle.derive_deck(SEED)
    events[1] = replace(
        dealt,
        shuffle_algorithm=shuffle.CERTIFICATION_DECK,
        seed_commitment=shuffle.deck_commitment(forged, SEED),
    )
    events[-1] = replace(ending, deck=forged)
    checks, findings = _verify(events)
    assert checks["seed-commitment"] == "fail"
    assert "seed-commitment" in findings


def test_a_given_deck_game_reveals_a_salted_commitment_that_verifies() -> None:
    game, events = start(easy_deck())
    game, more = play(game, g.Draw(), g.Collect(server_seed=SEED.hex(), deck=easy_deck()))
    checks, findings = _verify([*events, *more])
    assert set(checks.values()) == {"pass"}
    assert findings == []


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(
            lambda t: CardMoved("tableau:0", "tableau:1", ("KS", "QH", "JS")), id="move-too-many"
        ),
        pytest.param(lambda t: CardTurned("tableau:0", "AS"), id="turn-a-face-up-top"),
        pytest.param(lambda t: CardMoved("waste", "foundation:0", ("AS",)), id="move-from-empty"),
        pytest.param(
            lambda t: StakePlaced("x", "y", "vegas-draw1", 520, "GBP", "5", 52, "p", 1, "r"),
            id="second-stake",
        ),
        pytest.param(
            lambda t: Collected("player", 0, "GBP", 0, SEED.hex()), id="play-after-the-end"
        ),
    ],
)
def test_an_event_that_cannot_have_happened_is_a_rules_finding_not_a_crash(edit: object) -> None:
    """Rewritten records (hash chain recomputed) that no decider wrote: the audit and the
    replay name the first one and stop there, as they do an unreadable record."""
    events = _finished_seeded_game()
    bad = edit(None)  # type: ignore[operator]
    events.insert(2, bad)
    checks, findings = _verify(events)
    assert checks["rules"] == "fail"
    assert "rules" in findings
    records = recorded("g1", events)
    replayed = build_replay(records, postings_for("g1", events), PAYTABLES, masked=False)
    assert not replayed.verification.ok
    assert len(replayed.steps) == 2  # the stake and the deal; the third record cannot be
