"""The lobby: GET /v1/variants lists every game with its rules, piles, actions and paytable, and
GET /v1/quote says what a stake pays in any of them, before any money moves."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from service.games import STANDALONE as GAMES  # the lobby's: duel games are the duels'
from tests.api.client import Http, assert_problem

#: The first five, in the order front-ends first listed them; every game added since follows.
FIRST = ["vegas-draw1", "vegas-draw3", "klondike", "golf", "pyramid"]
ORDER = list(GAMES)
FIELDS = {
    "name",
    "title",
    "draw_count",
    "passes",
    "family",
    "rules_version",
    "enabled",
    "decks",
    "summary",
    "undo",
    "actions",
    "piles",
    "paytable",
    "rtp",
}
#: The reference bot's figure as first published, then the three players' and the basis.
RTP_FIELDS = {"rtp", "low", "high", "games", "bot", "measured"} | {
    "multiplier",
    "reference",
    "strong",
    "clairvoyant",
    "displayed",
    "basis",
    "beats_the_house",
}
FIGURE_FIELDS = {
    "player",
    "rtp",
    "low",
    "high",
    "games",
    "mean_units",
    "full_wins",
    "measured",
    "measured_on",
    "exact",
    "budget",
}


def _variants(http: Http) -> dict[str, Any]:
    response = http.get("/v1/variants")  # public: no token
    assert response.status_code == 200, response.get_json()
    body: dict[str, Any] = response.get_json()
    return body


def _by_name(http: Http) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in _variants(http)["variants"]}


def test_every_game_is_listed_with_its_fields(http: Http) -> None:
    body = _variants(http)
    assert [v["name"] for v in body["variants"]] == ORDER
    assert ORDER[: len(FIRST)] == FIRST
    assert body["rules_version"] == "vegas-klondike/1"
    for variant in body["variants"]:
        assert set(variant) == FIELDS, variant["name"]
        game = GAMES[variant["name"]]
        assert variant["title"] == game.title
        assert variant["decks"] == game.decks
        if variant["name"] in FIRST:
            assert variant["decks"] == 1
        assert variant["summary"]
        assert all(isinstance(line, str) for line in variant["summary"])
        assert variant["undo"] == game.undo_rule
        assert variant["piles"] == [{"id": s.id, "kind": s.kind} for s in game.layout.specs]
        rtp = variant["rtp"]
        assert set(rtp) == RTP_FIELDS, variant["name"]
        assert rtp["multiplier"] == game.multiplier
        for kind in ("reference", "strong", "clairvoyant", "displayed"):
            assert rtp[kind] is None or set(rtp[kind]) == FIGURE_FIELDS
        # The first fields are the reference bot's, as they always were.
        assert (rtp["rtp"], rtp["bot"], rtp["games"]) == (
            rtp["reference"]["rtp"],
            rtp["reference"]["player"],
            rtp["reference"]["games"],
        )
        assert rtp["displayed"] == (rtp["strong"] or rtp["reference"])
        assert rtp["displayed"]["player"] in rtp["basis"]
        if rtp["strong"] is not None:
            assert float(rtp["reference"]["rtp"]) < float(rtp["strong"]["rtp"])


def test_the_vegas_variants_keep_their_first_fields(http: Http) -> None:
    """What the first front-ends read: name, title, draw count and passes."""
    listed = _by_name(http)
    first = {
        name: (v["title"], v["draw_count"], v["passes"])
        for name, v in listed.items()
        if name.startswith("vegas-")
    }
    assert first == {
        "vegas-draw1": ("Vegas Klondike, draw one, one pass", 1, 1),
        "vegas-draw3": ("Vegas Klondike, draw three, three passes", 3, 3),
    }
    for name in ("vegas-draw1", "vegas-draw3"):
        assert listed[name]["family"] == "klondike"
        assert listed[name]["rules_version"] == "vegas-klondike/1"
        assert listed[name]["actions"] == ["draw", "recycle", "move", "turn", "undo"]
    assert listed["klondike"]["passes"] is None  # unlimited
    assert listed["klondike"]["actions"] == ["draw", "recycle", "move", "undo"]  # no turn


def test_golf_and_pyramid_list_their_own_piles_and_actions(http: Http) -> None:
    listed = _by_name(http)
    golf, pyramid = listed["golf"], listed["pyramid"]
    assert (golf["family"], golf["rules_version"], golf["draw_count"], golf["passes"]) == (
        "golf",
        "golf/3",
        1,
        1,
    )
    assert golf["actions"] == ["draw", "move", "undo"]
    assert [p["id"] for p in golf["piles"]] == ["stock", "waste"] + [
        f"tableau:{c}" for c in range(7)
    ]
    assert (pyramid["family"], pyramid["rules_version"], pyramid["passes"]) == (
        "pyramid",
        "pyramid/2",
        1,
    )
    assert pyramid["actions"] == ["draw", "remove", "undo"]
    assert [p["id"] for p in pyramid["piles"]] == ["stock", "waste", "foundation"] + [
        f"pyramid:{n}" for n in range(28)
    ]
    assert {p["kind"] for p in pyramid["piles"]} == {"stock", "waste", "foundation", "pyramid"}


@pytest.mark.parametrize("name", ORDER)
def test_each_paytable_states_m_its_units_and_the_formulas(http: Http, name: str) -> None:
    paytable = _by_name(http)[name]["paytable"]
    m, units = GAMES[name].multiplier, GAMES[name].max_units
    assert isinstance(paytable["multiplier"], str)  # M as a decimal string, never a float
    Fraction(paytable["multiplier"])  # and a number
    assert paytable == {
        "multiplier": m,
        "max_units": units,
        "units": GAMES[name].units_are,
        "winnings": f"floor(units x stake x {m} / {units})",
        "per_unit": f"stake x {m} / {units}",
        "max_payout": f"stake x {m}",
    }
    expected_units = {
        "vegas-draw1": 52,
        "vegas-draw3": 52,
        "klondike": 52,
        "golf": 35,
        "pyramid": 52,
        "scorpion": 52,
        "super-scorpion": 104,
        "forty-thieves": 104,
        "upside-down-pyramid": 104,
        "salic-law": 88,
        "three-shuffles": 48,
        "la-nivernaise": 104,
    }
    assert units == expected_units[name]
    if name.startswith("vegas-"):
        assert m == "5"  # a full Vegas win pays five times the stake


def test_the_stake_tables_are_listed_as_before(http: Http) -> None:
    body = _variants(http)
    gbp = next(t for t in body["paytables"] if t["currency"] == "GBP")
    assert gbp["stake_multiple_of"] == 52
    assert gbp["win_rate"] == "stake * 5 / 52"
    assert body["idle_collection"]["collect_after_seconds"] > 0


# --- quotes -----------------------------------------------------------------------------------


def _quote(http: Http, query: str) -> dict[str, Any]:
    response = http.get(f"/v1/quote?{query}")
    assert response.status_code == 200, response.get_json()
    body: dict[str, Any] = response.get_json()
    return body


@pytest.mark.parametrize("name", ["golf", "pyramid"])
@pytest.mark.parametrize("stake", [104, 520, 1_040, 26_000])
def test_a_quote_for_golf_and_pyramid(http: Http, name: str, stake: int) -> None:
    m, units = Fraction(GAMES[name].multiplier), GAMES[name].max_units
    quote = _quote(http, f"variant={name}&stake={stake}")
    max_payout = int(m * stake)  # floor: the house keeps any fraction
    assert quote == {
        "variant": name,
        "stake": stake,
        "currency": "GBP",
        "win_rate": int(m * stake / units),
        "multiplier": GAMES[name].multiplier,
        "max_units": units,
        "max_payout": max_payout,
        "max_net_win": max_payout - stake,
        "previous_stake": quote["previous_stake"],
        "next_stake": quote["next_stake"],
    }
    ladder = [104, 156, 208, 260, 520, 1040, 2080, 5200, 10400, 26000, 52000]
    i = ladder.index(stake)
    assert quote["previous_stake"] == (ladder[i - 1] if i else None)
    assert quote["next_stake"] == ladder[i + 1]


def test_a_golf_quote_rounds_down_what_a_card_is_worth(http: Http) -> None:
    """Golf's 35 units do not divide a 52-pence grid: a unit is worth a fraction the house
    keeps, and so is a full win at M of a stake that M does not divide."""
    quote = _quote(http, "variant=golf&stake=104&currency=EUR")
    m = Fraction(GAMES["golf"].multiplier)
    assert quote["currency"] == "EUR"
    assert quote["win_rate"] == int(m * 104 / 35) < m * 104 / 35


def test_a_vegas_quote_is_as_before(http: Http) -> None:
    quote = _quote(http, "variant=vegas-draw1&stake=520")
    assert (quote["win_rate"], quote["max_payout"], quote["max_net_win"]) == (50, 2_600, 2_080)
    assert (quote["multiplier"], quote["max_units"]) == ("5", 52)
    assert (quote["previous_stake"], quote["next_stake"]) == (260, 1_040)


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("variant=golf", "stake"),
        ("variant=bridge&stake=520", "variant"),
        ("variant=golf&stake=x", "stake"),
        ("variant=pyramid&stake=520&currency=gbp", "currency"),
        ("variant=pyramid&stake=520&m=2", "m"),
    ],
)
def test_a_bad_quote_request_is_a_validation_error(http: Http, query: str, field: str) -> None:
    problem = assert_problem(http.get(f"/v1/quote?{query}"), 422, "validation-error")
    assert list(problem["errors"]) == [field]


@pytest.mark.parametrize(
    ("stake", "rule"), [(157, "stake-not-multiple"), (52, "stake-out-of-range")]
)
def test_a_quote_of_a_stake_the_paytable_refuses_names_the_rule(
    http: Http, stake: int, rule: str
) -> None:
    assert_problem(
        http.get(f"/v1/quote?variant=pyramid&stake={stake}"), 422, "rule-violation", rule
    )
