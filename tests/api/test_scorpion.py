"""Scorpion and Super Scorpion end to end over HTTP, for real money: an operator deals each game
from a known deck or seed (certification mode) for a funded player, who plays it through the
actions route and collects. After every game the wallet holds exactly what the paytable says; at
the end the ledger and the betting history tell the same story, and every game replays and
verifies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from service.games import GAMES
from service.games.scorpion import SCORPION, SUPER_SCORPION, Scorpion
from service.rules.cards import RANKS, Card
from tests import builders
from tests.api.client import assert_salted_commitment
from tests.api.play import assert_none_of, legal, pile, refused, winnings
from tests.api.real_money import Session, check_books


def move(source: int, target: int, count: int) -> dict[str, Any]:
    return {
        "action": "move",
        "from": f"tableau:{source}",
        "to": f"tableau:{target}",
        "count": count,
    }


def deck_of(rules: Scorpion, placed: Mapping[int, Card]) -> list[Card]:
    """A deal-order deck with the given cards at the given positions (row x columns + column;
    the stock from position rows x columns, next card first), the rest in canonical order."""
    return list(builders.deck_with(placed, rules.decks))


def columns_deck(rules: Scorpion, columns: list[str], stock: str = "") -> dict[int, Card]:
    """Positions for whole columns written bottom first (``""``: left to the filler), and for
    the stock, next card first."""
    placed: dict[int, Card] = {}
    for c, text in enumerate(columns):
        for row, card in enumerate(text.split()):
            placed[row * rules.columns + c] = card
    for k, card in enumerate(stock.split()):
        placed[rules.tableau_cards + k] = card
    return placed


def units_seen(view: dict[str, Any]) -> int:
    """The cards in order, worked out from what the view shows: for each column with no
    face-down card and a King at the bottom, the same-suit descending run from it up."""
    total = 0
    for shown in view["piles"]:
        cards = shown["cards"]
        if shown["kind"] != "tableau" or shown["face_down"] or not cards or cards[0][0] != "K":
            continue
        n = 1
        while (
            n < len(cards)
            and cards[n][1] == cards[n - 1][1]
            and RANKS.index(cards[n][0]) + 1 == RANKS.index(cards[n - 1][0])
        ):
            n += 1
        total += n
    return total


def run(suit: str, ranks: str) -> str:
    return " ".join(r + suit for r in ranks)


#: A Scorpion deal won in 24 actions: spades, hearts and diamonds are each a King face down at
#: the bottom of columns 0-2 under two Aces and a run 5-2; columns 4-6 hold Q-6 of those suits;
#: column 3 shows K-T of clubs over three face-down clubs; the reserve holds 3C 2C AC.
SCORPION_WIN = columns_deck(
    SCORPION,
    [
        "KS AH AS " + run("S", "5432"),
        "KH 6C AD " + run("H", "5432"),
        "KD 4C 5C " + run("D", "5432"),
        "7C 8C 9C " + run("C", "KQJT"),
        run("S", "QJT9876"),
        run("H", "QJT9876"),
        run("D", "QJT9876"),
    ],
    "3C 2C AC",
)
SCORPION_WINNING_PLAY = [
    move(0, 4, 4),  # 5S-2S onto the 6S: the AS turns
    move(0, 4, 1),  # AS onto the 2S: the AH turns
    move(1, 5, 4),  # 5H-2H onto the 6H: the AD turns
    move(0, 5, 1),  # AH onto the 2H: the KS turns (1 in order)
    move(4, 0, 12),  # QS-AS onto the KS: 13 in order, column 4 empty
    move(3, 4, 4),  # KC-TC to the empty column: 17; the 9C turns
    move(2, 6, 4),  # 5D-2D onto the 6D: the 5C turns
    move(1, 6, 1),  # AD onto the 2D: the 6C turns
    move(3, 4, 1),  # 9C: the 8C turns
    move(3, 4, 1),  # 8C: the 7C turns
    move(3, 4, 1),  # 7C: column 3 empty
    move(1, 4, 1),  # 6C: the KH turns
    move(5, 1, 12),  # QH-AH onto the KH
    move(2, 4, 1),  # 5C: the 4C turns
    move(2, 4, 1),  # 4C: the KD turns
    move(6, 2, 12),  # QD-AD onto the KD
]


def test_the_scorpion_deal_shows_what_a_player_may_see(session: Session) -> None:
    deck = deck_of(SCORPION, SCORPION_WIN)
    game_id, view = session.deal("scorpion", 520, deck=deck)
    assert view["title"] == "Scorpion"
    assert [(p["id"], p["kind"], p["count"], p["face_down"]) for p in view["piles"]] == [
        ("stock", "stock", 3, 3),
        *((f"tableau:{c}", "tableau", 7, 3 if c < 4 else 0) for c in range(7)),
    ]
    assert pile(view, "tableau:3")["cards"] == ["KC", "QC", "JC", "TC"]
    assert pile(view, "tableau:4")["cards"] == run("S", "QJT9876").split()
    assert (view["stock_count"], view["waste"], view["foundations"]) == (3, [], [])
    assert legal(view, "draw") == [{"action": "draw"}]
    assert {"action": "move", "from": "tableau:0", "to": "tableau:4", "count": 4} in view[
        "legal_moves"
    ]
    hidden = ["KS", "AH", "AS", "KH", "6C", "AD", "KD", "4C", "5C", "7C", "8C", "9C"]
    assert_none_of([*hidden, "3C", "2C", "AC"], view, "the deal")
    http, token = session.http, session.player.token
    refused(http, token, game_id, move(0, 5, 4), "not-same-suit")  # the 5S onto the 6H
    refused(http, token, game_id, move(4, 0, 7), "not-one-rank-lower")  # the QS onto the 2S
    turn = {"action": "turn", "pile": "tableau:0"}
    refused(http, token, game_id, turn, "action-not-allowed")  # cards turn by themselves
    session.collect(game_id, "scorpion", 520, 0)


def test_four_scorpion_games_for_real_money(session: Session) -> None:
    # 1. A deck won completely: 52 cards in order, a full win of M x the stake.
    deck = deck_of(SCORPION, SCORPION_WIN)
    first, view = session.deal("scorpion", 520, deck=deck)
    assert_salted_commitment(view, deck)
    http, token = session.http, session.player.token
    for body in SCORPION_WINNING_PLAY[:4]:
        view = session.play(first, **body)
    assert (view["units"], view["can_undo"]) == (1, False)  # that move turned the KS
    refused(http, token, first, {"action": "undo"}, "undo-not-allowed")
    view = session.play(first, **SCORPION_WINNING_PLAY[4])
    assert (view["units"], view["can_undo"]) == (13, True)  # it turned nothing
    view = session.play(first, action="undo")
    assert (view["units"], pile(view, "tableau:4")["count"]) == (1, 12)
    for body in SCORPION_WINNING_PLAY[4:]:
        view = session.play(first, **body)
        assert view["units"] == units_seen(view)
    assert view["units"] == 49  # clubs K-4 in order
    refused(http, token, first, move(4, 0, 1), "nothing-on-an-ace")  # the 4C onto the AS
    refused(http, token, first, move(4, 3, 1), "only-king-to-empty-column")
    view = session.play(first, action="draw")  # the reserve: 3C, 2C and AC onto columns 0-2
    assert [pile(view, f"tableau:{c}")["cards"][-1] for c in range(3)] == ["3C", "2C", "AC"]
    assert (view["stock_count"], view["can_undo"], view["units"]) == (0, False, 49)
    refused(http, token, first, {"action": "draw"}, "stock-empty")
    for c in range(3):
        view = session.play(first, **move(c, 4, 1))
    assert (view["status"], view["units"]) == ("complete", 52)
    assert view["winnings"] == winnings("scorpion", 52, 520)
    assert view["legal_moves"] == [{"action": "collect"}]
    done = session.collect(first, "scorpion", 520, 52)
    assert done["revealed_deck"] == deck

    # 2. A seeded deal: the reserve dealt at once, then the first listed move a few times.
    second, view = session.deal("scorpion", 1_040, seed="33" * 32)
    view = session.play(second, action="draw")
    assert [p["count"] for p in view["piles"]] == [0, 8, 8, 8, 7, 7, 7, 7]
    for _ in range(6):
        moves = legal(view, "move")
        if not moves:
            break
        view = session.play(second, **moves[0])
    units = view["units"]
    assert units == units_seen(view) == 1  # one King, alone at the bottom of a column
    done = session.collect(second, "scorpion", 1_040, units)
    assert done["server_seed"] == "33" * 32

    # 3. A seeded deal collected untouched: nothing in order, nothing paid.
    third, view = session.deal("scorpion", 104, seed="44" * 32)
    session.collect(third, "scorpion", 104, 0)

    check_books(
        session,
        [
            (first, "scorpion", 520, 52),
            (second, "scorpion", 1_040, units),
            (third, "scorpion", 104, 0),
        ],
    )


#: A Super Scorpion deal: column 9 (8C-AC, in order) goes onto the 9C topping column 8, then
#: column 7's KS-7S into the emptied column; the hand's tenth card is the 6S, dealt onto it.
SUPER_PART = columns_deck(
    SUPER_SCORPION,
    [
        "",
        "",
        "",
        "",
        "",
        "2H",
        "2D",
        "2C " + run("S", "KQJT987"),
        "3H 3D 3S 4H 4D 4S 5H 9C",
        run("C", "8765432A"),
    ],
    "5D 6D 6H 7H 7D 8H 8D 9H 9D 6S",
)


def test_three_super_scorpion_games_for_real_money(session: Session) -> None:
    http, token = session.http, session.player.token
    # 1. Two decks: a column moved whole, a King run moved into it, undone and moved again,
    # then a deal from the hand that lays the 6S on it.
    deck = deck_of(SUPER_SCORPION, SUPER_PART)
    first, view = session.deal("super-scorpion", 1_040, deck=deck)
    assert [(p["count"], p["face_down"]) for p in view["piles"]] == [
        (24, 24),
        *((8, 3 if c < 5 else 0) for c in range(10)),
    ]
    refused(http, token, first, move(7, 9, 7), "nothing-on-an-ace")  # the KS onto the AC
    view = session.play(first, **move(9, 8, 8))
    assert (pile(view, "tableau:9")["count"], view["units"], view["can_undo"]) == (0, 0, True)
    view = session.play(first, **move(7, 9, 7))
    assert (view["units"], pile(view, "tableau:7")["cards"]) == (7, ["2C"])
    view = session.play(first, action="undo")
    assert (view["units"], pile(view, "tableau:9")["count"]) == (0, 0)
    refused(http, token, first, move(7, 9, 8), "only-king-to-empty-column")  # the 2C under it
    view = session.play(first, **move(7, 9, 7))
    view = session.play(first, action="draw")  # one card onto each of the ten columns
    assert [pile(view, f"tableau:{c}")["cards"][-1] for c in range(10)] == (
        "5D 6D 6H 7H 7D 8H 8D 9H 9D 6S".split()
    )
    assert (view["stock_count"], view["units"], view["can_undo"]) == (14, 8, False)
    assert view["winnings"] == winnings("super-scorpion", 8, 1_040)
    done = session.collect(first, "super-scorpion", 1_040, 8)
    assert done["revealed_deck"] == deck

    # 2. A seeded two-deck deal: the hand dealt out, ten, ten and the last four for columns 0-3.
    second, view = session.deal("super-scorpion", 520, seed="22" * 32)
    counts = []
    for _ in range(3):
        view = session.play(second, action="draw")
        counts.append([p["count"] for p in view["piles"]])
    assert counts == [
        [14, *([9] * 10)],
        [4, *([10] * 10)],
        [0, *([11] * 4), *([10] * 6)],
    ]
    assert legal(view, "draw") == []
    refused(http, token, second, {"action": "draw"}, "stock-empty")
    units = view["units"]
    assert units == units_seen(view) == 0
    done = session.collect(second, "super-scorpion", 520, units)
    assert done["server_seed"] == "22" * 32

    # 3. A seeded deal played by the first listed move a few times, then collected.
    third, view = session.deal("super-scorpion", 104, seed="66" * 32)
    for _ in range(5):
        moves = legal(view, "move")
        if not moves:
            break
        view = session.play(third, **moves[0])
    third_units = view["units"]
    assert third_units == units_seen(view) == 0
    session.collect(third, "super-scorpion", 104, third_units)

    check_books(
        session,
        [
            (first, "super-scorpion", 1_040, 8),
            (second, "super-scorpion", 520, units),
            (third, "super-scorpion", 104, third_units),
        ],
    )
    assert GAMES["super-scorpion"].decks == 2


#: A Super Scorpion deal where two moves make a 16-card move: column 6's 4S (with the seven
#: cards on it) onto column 5's top 5S, then column 5's bottom 9H, with the fifteen on it, onto
#: column 7's top TH. Columns 5-9 lie face up.
SUPER_LONG_RUN = columns_deck(
    SUPER_SCORPION,
    [
        "",
        "",
        "",
        "",
        "",
        "9H 2C 3C 4C 6C 7C 8C 5S",
        "4S 2D 3D 4D 6D 7D 8D 9D",
        "2H 3H 4H 5H 6H 7H 8H TH",
    ],
)


def test_a_listed_move_of_more_than_13_cards_is_accepted_exactly_as_listed(
    session: Session,
) -> None:
    """GAMES.md: any face-up card moves with every card on top of it, so a run can be longer
    than a suit; legal_moves lists it, and /actions takes it back as listed."""
    game_id, view = session.deal(
        "super-scorpion", 520, deck=deck_of(SUPER_SCORPION, SUPER_LONG_RUN)
    )
    view = session.play(game_id, **move(6, 5, 8))
    assert pile(view, "tableau:5")["count"] == 16
    listed = move(5, 7, 16)
    assert listed in view["legal_moves"]
    view = session.play(game_id, **listed)
    assert (pile(view, "tableau:5")["count"], pile(view, "tableau:7")["count"]) == (0, 24)
    assert pile(view, "tableau:7")["cards"][7:9] == ["TH", "9H"]
    session.collect(game_id, "super-scorpion", 520, view["units"])
