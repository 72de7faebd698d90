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
from service.core.paytable import Paytable, PaytableBook, default_paytables
from service.core.replay import build_replay
from service.games import STANDALONE, game_named
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


def _dealt_and_collected_as(game_id: str, rules_version: str, multiplier: str) -> list[GameEvent]:
    """A game of ``game_id`` as a release pricing it at ``multiplier`` under ``rules_version``
    recorded it: dealt from a committed seed, collected at once."""
    rules = game_named(game_id)
    seed = bytes([5]) * 32
    deck = shuffle.derive_deck(seed, None, rules.decks)
    sealed = g.hidden_cards(rules, deck)
    begin = g.StartGame(
        "game-1",
        "player-1",
        game_id,
        520,
        default_paytables()["GBP"],
        deck,
        shuffle.ALGORITHM,
        shuffle.commitment(seed),
    )
    events = g.decide(g.INITIAL, begin, sealed)
    placed = events[0]
    assert isinstance(placed, StakePlaced)
    events[0] = replace(placed, rules_version=rules_version, multiplier=multiplier)
    collect = g.Collect(server_seed=seed.hex())
    return events + g.decide(g.fold(events), collect, sealed, shuffle.redealer(seed, None))


@pytest.mark.parametrize(
    ("game_id", "version", "multiplier"),
    [(r.id, v, m) for r in STANDALONE.values() for v, m in r.earlier_prices],
)
def test_a_game_dealt_at_an_earlier_price_verifies_at_the_m_it_recorded(
    game_id: str, version: str, multiplier: str
) -> None:
    """Re-pricing a game (a new rules version, play unchanged) leaves every game dealt before
    it verifying, paid at the M it recorded."""
    events = _dealt_and_collected_as(game_id, version, multiplier)
    found = verify_game(recorded("g", events), postings_for("g", events), default_paytables())
    assert found.findings == []


@pytest.mark.parametrize("game_id", ["klondike", "golf"])
def test_a_price_or_version_the_game_never_had_is_a_finding(game_id: str) -> None:
    rules = game_named(game_id)
    for version, multiplier in [
        (rules.earlier_prices[0][0], "9.99"),  # an earlier version, at a price it never had
        (rules.rules_version, rules.earlier_prices[0][1]),  # today's version at an old price
        (f"{game_id}/99", rules.multiplier),  # a version the game never had
    ]:
        events = _dealt_and_collected_as(game_id, version, multiplier)
        found = verify_game(recorded("g", events), postings_for("g", events), default_paytables())
        assert {f.check for f in found.findings} == {"rules", "payout"}, (version, multiplier)


def _staked_as(paytable: Paytable, stake: int = 520, **changes: object) -> list[GameEvent]:
    """A golf game dealt at ``paytable`` and collected at once, its StakePlaced changed."""
    rules = game_named("golf")
    seed = bytes([9]) * 32
    deck = shuffle.derive_deck(seed, None, rules.decks)
    sealed = g.hidden_cards(rules, deck)
    table = replace(paytable, min_stake=52, ladder=(52, *paytable.ladder))
    begin = g.StartGame(
        "game-1", "player-1", "golf", stake, table, deck, shuffle.ALGORITHM,
        shuffle.commitment(seed),
    )  # fmt: skip
    events = g.decide(g.INITIAL, begin, sealed)
    placed = events[0]
    assert isinstance(placed, StakePlaced)
    events[0] = replace(placed, **changes)  # type: ignore[arg-type]
    collect = g.Collect(server_seed=seed.hex())
    return events + g.decide(g.fold(events), collect, sealed, shuffle.redealer(seed, None))


def _findings(events: list[GameEvent], book: PaytableBook) -> set[str]:
    found = verify_game(recorded("g", events), postings_for("g", events), book)
    return {f.check for f in found.findings}


def test_a_table_id_shared_by_currencies_is_read_in_the_game_s_own_currency() -> None:
    gbp = replace(default_paytables()["GBP"], id="std", version=7)
    usd = replace(gbp, currency="USD", min_stake=5_200, ladder=(5_200,), default_stake=5_200)
    book = PaytableBook({}, [gbp.as_config(), usd.as_config()])
    assert _findings(_staked_as(gbp, stake=520), book) == set()
    assert book.tables("std", 7, "USD") == [usd]


def test_every_logged_copy_of_a_version_prices_its_own_games() -> None:
    """A table changed without a new version was logged twice: a game under either copy is
    its, and an M neither copy had is a finding."""
    one = replace(default_paytables()["GBP"], id="std", version=7, rates=(("golf", "1.1"),))
    two = replace(one, rates=(("golf", "1.05"),))
    book = PaytableBook({}, [one.as_config(), two.as_config()])
    assert _findings(_staked_as(one), book) == set()
    assert _findings(_staked_as(two), book) == set()
    assert _findings(_staked_as(one, multiplier="1.5"), book) == {"rules", "payout"}


def test_with_a_log_a_version_it_never_logged_pays_only_the_rules_prices() -> None:
    logged = replace(default_paytables()["GBP"], id="std", version=7)
    book = PaytableBook({}, [logged.as_config()])
    forged = _staked_as(logged, paytable_version=8, multiplier="3")
    assert _findings(forged, book) == {"rules", "payout"}
    plain = _staked_as(logged, paytable_version=8)  # at the rules' M: no own rate to check
    assert _findings(plain, book) == set()


def test_a_stake_off_the_grid_is_a_finding_not_an_error() -> None:
    logged = replace(default_paytables()["GBP"], id="std", version=7)
    events = _staked_as(logged)
    placed = events[0]
    assert isinstance(placed, StakePlaced)
    events[0] = replace(placed, stake=500, paytable_version=8)
    assert "payout" in _findings(events, PaytableBook({}, [logged.as_config()]))
