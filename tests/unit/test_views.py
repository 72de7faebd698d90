"""What a player sees (never a sealed card: face-down or stock) and what an auditor sees."""

from __future__ import annotations

import json
import re
from typing import Any

from service.core import game_decider as g
from service.core import shuffle
from service.core.game_views import full_view, player_view
from service.games.klondike import VEGAS_DRAW1
from tests.builders import SEED, easy_deck, play, start

SEED_DECK = shuffle.derive_deck(SEED)
PILE_IDS = [
    "stock",
    "waste",
    *(f"foundation:{i}" for i in range(4)),
    *(f"tableau:{i}" for i in range(7)),
]


def _sealed_codes(game: g.Game) -> set[str]:
    """The codes of every card still face down on the table (stock and columns), worked out
    from the deck itself, not from anything the game state knows."""
    assert game.table is not None
    hidden = g.hidden_cards(VEGAS_DRAW1, SEED_DECK)
    codes: set[str] = set()
    for pile in game.table.piles:
        for slot in pile.face_down:
            assert isinstance(slot, int), f"the fold knows a face-down card: {slot}"
            codes.add(hidden[slot])
    return codes


def _named_in(card: str, text: str) -> bool:
    return re.search(rf"\b{card}\b", text) is not None


def _assert_no_sealed_card_in(view: dict[str, Any], game: g.Game) -> set[str]:
    """No face-down or stock card's code anywhere in the view, nor any auditor-only field."""
    text = json.dumps(view)
    hidden = _sealed_codes(game)
    assert not [card for card in hidden if _named_in(card, text)]
    assert not {"deck", "stock", "waste_all", "foundation_piles"} & set(view)
    assert '"face_down_cards"' not in text
    return hidden


def test_player_view_hides_face_down_cards_and_the_stock() -> None:
    game, _ = start()
    assert game.status == "in_progress"
    hidden = _assert_no_sealed_card_in(player_view(game), game)
    assert len(hidden) == 21 + 24
    assert hidden == set(SEED_DECK[:28]) - {"2C", "JC", "KC", "AC", "TH", "3S", "JD"} | set(
        SEED_DECK[28:]
    )
    assert "deck" not in player_view(game)


def test_player_view_never_names_a_sealed_card_as_play_goes_on() -> None:
    game, _ = start()
    commands: list[g.Command] = [
        g.MoveCards("tableau:3", "foundation"),  # AC up
        g.Turn("tableau:3"),  # 4S
        g.Draw(),  # 3H
        g.Draw(),  # 4H
        g.MoveCards("tableau:0", "foundation"),  # 2C up; tableau:0 empty
        g.MoveCards("tableau:2", "tableau:0"),  # KC to the empty column
        g.Draw(),  # KD
    ]
    for command in commands:
        game, _ = play(game, command)
        assert game.status == "in_progress"
        _assert_no_sealed_card_in(player_view(game), game)
    hidden = _sealed_codes(game)
    assert len(hidden) == 45 - 3 - 1  # three drawn, 4S turned
    text = json.dumps(player_view(game))
    assert hidden.isdisjoint({"4S", "3H", "4H", "KD"})  # seen cards are sealed no more
    assert _named_in("4S", text)  # the turned card, and the waste's top, are shown
    assert _named_in("KD", text)


def test_player_view_shows_counts_fan_and_face_up_cards() -> None:
    game, _ = start()
    game, _ = play(game, g.Draw())
    view = player_view(game)
    assert view["stock_count"] == 23
    assert view["passes_left"] == 1
    assert view["waste"] == ["3H"]
    assert view["waste_count"] == 1
    assert view["tableau"][6] == {"face_down": 6, "face_up": ["JD"]}
    assert view["foundations"] == [None, None, None, None]
    assert view["seed_commitment"] == shuffle.commitment(SEED)
    assert view["server_seed"] is None
    assert view["winnings"] == 0
    assert view["can_undo"] is True
    assert {"action": "undo"} in view["legal_moves"]
    assert {"action": "move", "from": "tableau:3", "to": "foundation:0", "count": 1} in view[
        "legal_moves"
    ]


def test_player_view_has_the_generic_game_fields() -> None:
    game, _ = start()
    game, _ = play(game, g.Draw(), g.MoveCards("tableau:3", "foundation"))
    view = player_view(game)
    assert view["title"] == VEGAS_DRAW1.title
    assert view["variant"] == "vegas-draw1"
    assert view["multiplier"] == "5"
    assert (view["units"], view["max_units"]) == (1, 52)
    assert view["foundation_count"] == view["units"]
    assert (view["win_rate"], view["winnings"]) == (50, 50)
    assert view["revealed_deck"] is None
    assert view["counters"] == {"stock": 23, "passes_left": 1}


def test_player_view_lists_every_pile_with_only_its_face_up_cards() -> None:
    game, _ = start()
    game, _ = play(game, g.Draw(), g.MoveCards("tableau:3", "foundation"))
    piles = player_view(game)["piles"]
    assert [p["id"] for p in piles] == PILE_IDS
    assert [p["kind"] for p in piles] == [
        "stock",
        "waste",
        *["foundation"] * 4,
        *["tableau"] * 7,
    ]
    by_id = {p["id"]: p for p in piles}
    assert by_id["stock"] == {
        "id": "stock",
        "kind": "stock",
        "count": 23,
        "face_down": 23,
        "cards": [],
    }
    assert by_id["waste"] == {
        "id": "waste",
        "kind": "waste",
        "count": 1,
        "face_down": 0,
        "cards": ["3H"],
    }
    assert by_id["foundation:0"]["cards"] == ["AC"]
    assert by_id["foundation:1"] == {
        "id": "foundation:1",
        "kind": "foundation",
        "count": 0,
        "face_down": 0,
        "cards": [],
    }
    assert by_id["tableau:3"] == {
        "id": "tableau:3",
        "kind": "tableau",
        "count": 3,
        "face_down": 3,
        "cards": [],
    }
    assert by_id["tableau:6"] == {
        "id": "tableau:6",
        "kind": "tableau",
        "count": 7,
        "face_down": 6,
        "cards": ["JD"],
    }


def test_draw_three_fan_shows_in_the_waste_pile_and_field() -> None:
    game, _ = start(variant="vegas-draw3")
    game, _ = play(game, g.Draw(), g.Draw())
    view = player_view(game)
    waste = next(p for p in view["piles"] if p["id"] == "waste")
    assert view["waste"] == waste["cards"] == ["AH", "8S", "5C"]
    assert (view["waste_count"], waste["count"]) == (6, 6)
    assert view["counters"] == {"stock": 18, "passes_left": 3}


def test_a_turn_legal_move_names_the_pile_and_the_column() -> None:
    game, _ = start()
    assert not [m for m in player_view(game)["legal_moves"] if m["action"] == "turn"]
    game, _ = play(game, g.MoveCards("tableau:3", "foundation"))  # AC up: tableau:3 face down
    turns = [m for m in player_view(game)["legal_moves"] if m["action"] == "turn"]
    assert turns == [{"action": "turn", "pile": "tableau:3", "column": 3}]


def test_full_view_of_an_unfinished_game_is_the_player_view() -> None:
    game, _ = start()
    assert full_view(game) == player_view(game)
    game, _ = play(game, g.Draw(), g.MoveCards("tableau:3", "foundation"))
    assert full_view(game) == player_view(game)
    _assert_no_sealed_card_in(full_view(game), game)


def test_full_view_after_collect_shows_every_card_where_it_lies() -> None:
    game, _ = start()
    game, _ = play(game, g.Draw(), g.MoveCards("tableau:3", "foundation"))
    game, _ = play(game, g.Collect(server_seed=SEED.hex()))
    view = full_view(game)
    assert view["deck"] == list(SEED_DECK)
    assert view["shuffle_algorithm"] == shuffle.ALGORITHM
    assert view["stock"][:3] == ["4H", "KD", "AH"]
    assert len(view["stock"]) == 23
    assert view["waste_all"] == ["3H"]
    assert view["foundation_piles"] == [["AC"], [], [], []]
    assert view["tableau"][6]["face_down_cards"] == ["3C", "5S", "6D", "8D", "4C", "AS"]
    assert view["tableau"][3]["face_down_cards"] == ["5H", "JH", "4S"]
    assert view["tableau"][0]["face_down_cards"] == []
    by_id = {p["id"]: p for p in view["piles"]}
    assert by_id["tableau:4"]["face_down_cards"] == ["7S", "7D", "TD", "QD"]
    assert by_id["stock"]["face_down_cards"] == list(SEED_DECK[28:][::-1][:-1])
    # Everything the player view said is still there (the piles gain their face-down cards).
    shown = player_view(game)
    assert set(shown) <= set(view)
    assert {k: view[k] for k in shown if k not in ("tableau", "piles")} == {
        k: v for k, v in shown.items() if k not in ("tableau", "piles")
    }
    for full, seen in zip(view["piles"], shown["piles"], strict=True):
        assert {k: v for k, v in full.items() if k != "face_down_cards"} == seen


def test_full_view_after_collecting_a_deck_game_shows_the_revealed_deck() -> None:
    deck = easy_deck()
    game, _ = start(deck)
    assert full_view(game) == player_view(game)
    game, _ = play(game, g.Collect(server_seed=SEED.hex(), deck=deck))
    view = full_view(game)
    assert view["revealed_deck"] == list(deck)
    assert view["deck"] == list(deck)
    assert view["shuffle_algorithm"] == shuffle.CERTIFICATION_DECK
    assert view["stock"] == list(deck[28:])
    assert view["tableau"][6]["face_down_cards"] == [deck[i] for i in (6, 12, 17, 21, 24, 26)]


def test_seed_appears_in_views_only_after_the_game_ends() -> None:
    game, _ = start()
    assert player_view(game)["server_seed"] is None
    game, _ = play(game, g.Collect(server_seed=SEED.hex()))
    assert player_view(game)["server_seed"] == SEED.hex()
    assert player_view(game)["legal_moves"] == []
    assert player_view(game)["payout"] == 0
