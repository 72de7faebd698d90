"""The operator's price (issue 42): a paytable may pay a game at its own rate (PAYTABLES_FILE's
``rates``), in place of the M its rules publish; a game dealt under it records that M, pays it,
and verifies against it (the database's ledger mapping too); GET /v1/variants shows every
game's M at each paytable with the RTP strong play gets there, worked out from the published
units; a price strong play beats is a significant event when the configuration is logged."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from service.app import create_app
from service.bootstrap import Container, build
from service.core import game_decider as g
from service.core.context import Actor
from service.core.paytable import Paytable, PaytableBook, paytables_from_config, winnings
from service.games import STANDALONE
from service.rtp.published import beating_the_house, publication
from service.runtime.config import ConfigError, Settings
from service.services import history_audits
from service.services.advantage import published_for
from service.services.configuration_log import log_configuration
from tests.builders import easy_deck
from tests.integration.conftest import World, as_player

#: GBP's default table, its own version, paying Vegas draw three at 4.2 instead of the seeds' 5.
RATED = {
    "id": "vegas-gbp",
    "version": 2,
    "currency": "GBP",
    "min_stake": 104,
    "default_stake": 520,
    "max_stake": 1_040_000,
    "ladder": [104, 520, 1_040, 5_200],
    "rates": {"vegas-draw3": "4.2"},
}
AUDITOR = Actor("auditor-1", "auditor")


def test_a_paytable_s_rates_are_read_checked_and_logged() -> None:
    (table,) = paytables_from_config([RATED]).values()
    assert table.multiplier_for("vegas-draw3", "5") == "4.2"
    assert table.multiplier_for("golf", "1.17") == "1.17"  # not named: the rules' M
    assert table.as_config()["rates"] == {"vegas-draw3": "4.2"}
    assert "rates" not in replace(table, rates=()).as_config()  # logs as it always did
    for bad in ({"vegas-draw3": "4.255"}, {"vegas-draw3": "0"}, {"vegas-draw3": "x"}):
        with pytest.raises(ValueError, match="M must be"):
            paytables_from_config([{**RATED, "rates": bad}])


def test_a_rate_for_no_such_game_is_refused_at_start(tmp_path: Path) -> None:
    path = tmp_path / "paytables.json"
    path.write_text(json.dumps([{**RATED, "rates": {"vegas-draw4": "4"}}]))
    with pytest.raises(ConfigError, match="no game vegas-draw4"):
        Settings.from_env({"APP_ENV": "test", "PAYTABLES_FILE": str(path)})


@pytest.fixture
def rated(fresh_container: Container) -> Iterator[Container]:
    """The scratch database's services, GBP's paytable paying Vegas draw three at 4.2."""
    (table,) = paytables_from_config([RATED]).values()
    settings = replace(fresh_container.settings, paytables={"GBP": table})
    container = build(settings, migrate=False)
    try:
        yield container
    finally:
        container.close()


def _three_aces_at_the_rate(rated: Container) -> uuid.UUID:
    """A certification deal at GBP's rated table, three Aces up and collected at 4.2."""
    world = World(rated)
    player = world.player(balance=5_200)
    game = world.game(player, variant="vegas-draw3", deck=easy_deck())
    game_id = uuid.UUID(game.state.game_id)
    me = as_player(player.player_id)
    rated.games.play(me, game_id, g.Draw())
    for _ in range(3):
        rated.games.play(me, game_id, g.MoveCards("waste", "foundation"))
    assert rated.games.collect(me, game_id).state.units == 3
    return game_id


def test_a_game_dealt_at_the_operator_s_rate_pays_and_verifies_at_it(rated: Container) -> None:
    """A certification deal (a known deck, the sandbox's money) at GBP's table: three Aces up,
    collected at 4.2, the database's ledger mapping taking the winnings at the recorded M
    (it refuses any other), and the audit's verification of the game clean."""
    world = World(rated)
    player = world.player(balance=5_200)
    assert rated.games.quote("vegas-draw3", 520, "GBP").multiplier == "4.2"
    game = world.game(player, variant="vegas-draw3", deck=easy_deck())
    game_id = uuid.UUID(game.state.game_id)
    assert game.state.info is not None
    assert game.state.info.multiplier == "4.2"
    me = as_player(player.player_id)
    rated.games.play(me, game_id, g.Draw())
    for _ in range(3):
        rated.games.play(me, game_id, g.MoveCards("waste", "foundation"))
    done = rated.games.collect(me, game_id)
    assert done.state.units == 3
    paid = winnings(3, 520, "4.2", 52)
    assert paid < winnings(3, 520, "5", 52)
    assert world.sandbox_balance(player) == -520 + paid
    with rated.audit_unit_of_work() as uow:
        uow.snapshot()
        findings = history_audits.check_unit(
            uow, f"game-{game_id}", rated.settings.paytables, lambda _: []
        )
    assert findings == []


def test_a_version_no_longer_configured_is_verified_as_the_configuration_log_recorded_it(
    rated: Container,
) -> None:
    """A game staked on a paytable version that is no longer configured is checked against
    that version as the configuration log recorded it, not against the M the game recorded
    for itself: a log saying the version paid 4 finds the 4.2 the stream claims."""
    game_id = _three_aces_at_the_rate(rated)
    today = replace(paytables_from_config([RATED])["GBP"], version=3, rates=())
    later = build(replace(rated.settings, paytables={"GBP": today}), migrate=False)
    try:
        # Not in the log: the M the game recorded stands in for its version's.
        assert later.audits.replay(game_id, AUDITOR).verification.findings == []
        said = {**RATED, "rates": {"vegas-draw3": "4"}}
        with later.unit_of_work() as uow:
            uow.significant.record(
                "configuration",
                "test",
                {"fingerprint": "an earlier start's", "configuration": {"paytables": [said]}},
            )
            uow.commit()
        found = later.audits.replay(game_id, AUDITOR).verification.findings
        # The deal re-decided under that version records M 4, and its payout is checked at 4.
        assert {f.check for f in found} == {"rules", "payout"}
        assert ("payout", "M 4, max units 52") in [(f.check, f.expected) for f in found]
    finally:
        later.close()
    # As logged by the start that dealt it, the version verifies.
    book = PaytableBook({"GBP": today}, [RATED])
    with rated.audit_unit_of_work() as uow:
        uow.snapshot()
        assert history_audits.check_unit(uow, f"game-{game_id}", book, lambda _: []) == []


def test_each_paytable_shows_every_game_s_price_and_its_strong_play_rtp(
    rated: Container,
) -> None:
    body = create_app(rated).test_client().get("/v1/variants").get_json()
    (table,) = body["paytables"]
    prices = {p["variant"]: p for p in table["prices"]}
    assert table["rates"] == {"vegas-draw3": "4.2"}
    draw3 = prices["vegas-draw3"]
    at_rate = publication("vegas-draw3", "4.2")
    assert at_rate is not None
    assert at_rate.strong is not None
    assert (draw3["multiplier"], draw3["own_rate"]) == ("4.2", True)
    assert draw3["rtp"]["rtp"] == at_rate.strong.rtp
    assert draw3["beats_the_house"] is at_rate.beats_the_house
    draw1 = prices["vegas-draw1"]
    assert (draw1["multiplier"], draw1["own_rate"]) == ("5", False)
    # The seeds' price: the variant's own figure at its M.
    seeds = publication("vegas-draw1")
    assert seeds is not None
    assert draw1["rtp"] == json.loads(json.dumps(body["variants"][0]["rtp"]["displayed"]))
    assert draw1["beats_the_house"] is seeds.beats_the_house


def test_a_price_strong_play_beats_is_a_significant_event_when_logged(
    fresh_container: Container,
) -> None:
    settings = fresh_container.settings
    beaten = beating_the_house(t for _, t in sorted(settings.paytables.items()))
    with fresh_container.unit_of_work() as uow:
        assert log_configuration(uow, settings, "web-1") is True
    with fresh_container.unit_of_work() as uow:
        events = [e.details for e in uow.significant.page(kind="beats-the-house", limit=10)]
    # The seeds' Vegas draw three at M = 5 is one (its strong play's interval reaches 100%).
    assert any(p["variant"] == "vegas-draw3" for p in beaten)
    assert events == [{"prices": beaten}]
    # A price nobody's strong play beats logs none: every game at M 1.
    cheap = {
        cur: replace(t, version=t.version + 1, rates=tuple((v, "1") for v in STANDALONE))
        for cur, t in settings.paytables.items()
    }
    assert beating_the_house(cheap.values()) == []


def test_a_paytable_without_rates_is_the_same_table_as_before() -> None:
    table = Paytable("vegas-gbp", 1, "GBP", 104, 520, 1_040_000, (104, 520))
    assert table.multiplier_for("vegas-draw3", "5") == "5"
    assert table.as_config() == {
        "id": "vegas-gbp",
        "version": 1,
        "currency": "GBP",
        "min_stake": 104,
        "default_stake": 520,
        "max_stake": 1_040_000,
        "ladder": [104, 520],
    }


def test_the_watcher_judges_a_return_against_strong_play_at_the_price_it_was_played_at() -> None:
    """A player's or a game's return in GBP is judged against strong play at GBP's own rate
    (4.2 here), not at the rules' M; elsewhere at the rules' M."""
    (table,) = paytables_from_config([RATED]).values()
    assert published_for("vegas-draw3", "GBP", {"GBP": table}) == publication("vegas-draw3", "4.2")
    assert published_for("vegas-draw3", "EUR", {"GBP": table}) == publication("vegas-draw3")


def test_a_logged_table_in_a_shape_it_cannot_read_is_passed_over() -> None:
    """An entry an older release logged in another shape never stops the audit: it is passed
    over, and the tables it can read are known."""
    book = PaytableBook(
        {}, [{"id": "odd"}, {**RATED, "ladder": "x"}, {**RATED, "rates": []}, RATED]
    )
    (known,) = book.tables("vegas-gbp", 2, "GBP")
    assert known.multiplier_for("vegas-draw3", "5") == "4.2"
    assert book.tables("odd", 1, None) == []


def test_a_configuration_row_of_another_shape_never_stops_the_log_s_tables(
    rated: Container,
) -> None:
    """The log is append-only: a configuration row whose paytables are not a list of tables
    stays, and reading the logged tables passes over it."""
    with rated.unit_of_work() as uow:
        for odd in ({"paytables": {"id": "x"}}, {"paytables": ["x", 1, RATED]}, {}):
            uow.significant.record("configuration", "test", {"configuration": odd})
        uow.commit()
    with rated.audit_unit_of_work() as uow:
        uow.snapshot()
        assert uow.significant.logged_paytables() == [RATED]
