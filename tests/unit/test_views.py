"""What a player sees (never a face-down card or the stock order) and what an auditor sees."""

from __future__ import annotations

import json

from service import game as g
from service import shuffle
from service.views import full_view, player_view
from tests.builders import SEED, play, start


def _hidden_cards(game: g.Game) -> set[str]:
    assert game.layout is not None
    hidden = set(game.layout.stock)
    for column in game.layout.tableau:
        hidden.update(column.down)
    return hidden


def test_player_view_hides_face_down_cards_and_the_stock() -> None:
    game, _ = start()
    text = json.dumps(player_view(game))
    hidden = _hidden_cards(game)
    assert len(hidden) == 21 + 24
    assert not [card for card in hidden if f'"{card}"' in text]
    assert "deck" not in player_view(game)


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


def test_full_view_shows_every_card_where_it_lies() -> None:
    game, _ = start()
    view = full_view(game)
    assert view["deck"] == list(shuffle.derive_deck(SEED))
    assert view["stock"][:3] == ["3H", "4H", "KD"]
    assert view["tableau"][6]["face_down_cards"] == ["3C", "5S", "6D", "8D", "4C", "AS"]


def test_seed_appears_in_views_only_after_the_game_ends() -> None:
    game, _ = start()
    game, _ = play(game, g.Collect(server_seed=SEED.hex()))
    assert player_view(game)["server_seed"] == SEED.hex()
    assert player_view(game)["legal_moves"] == []
    assert player_view(game)["payout"] == 0
