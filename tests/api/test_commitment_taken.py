"""A seed deals one real game or duel (migrations/0032, 0036): a certification deal given a real
game's revealed seed carries that game's commitment, which keep_seed refuses. The client is told
so (409 commitment-taken), not an internal error, and nothing is applied."""

from __future__ import annotations

import secrets
from typing import Any

from service.core import shuffle
from tests.api.books import DbConn, wallet
from tests.api.client import Http, assert_problem
from tests.api.factories import WalletFactory


def _deal(http: Http, token: str, **body: Any) -> Any:
    return http.post("/v1/games", token, json={"variant": "vegas-draw1", "stake": 520, **body})


def _deals_on(admin_conn: DbConn, commitment: str) -> int:
    row = admin_conn.execute(
        "SELECT count(*) FROM events WHERE type IN ('Dealt', 'DuelOpened') "
        "AND data->>'seed_commitment' = %s",
        (commitment,),
    ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_certification_deal_given_a_real_game_s_seed_is_409_commitment_taken(
    http: Http, admin_conn: DbConn
) -> None:
    real = WalletFactory.create(balance=520).player
    dealt = _deal(http, real.token)
    assert dealt.status_code == 201, dealt.get_json()
    game = dealt.get_json()
    collected = http.post(f"/v1/games/{game['id']}/collect", real.token)
    assert collected.status_code == 200, collected.get_json()
    seed = collected.get_json()["server_seed"]
    assert shuffle.seed_matches(seed, game["seed_commitment"])

    lab = WalletFactory.create(balance=520).player
    before = wallet(http, lab)
    refused = _deal(http, http.operator_key, player_id=lab.id, seed=seed)
    problem = assert_problem(refused, 409, "commitment-taken")
    assert game["id"] not in problem["detail"]  # the other game is not named to the caller
    # Nothing applied: no game, no sandbox stake, the real game's deal the only one on its seed.
    assert wallet(http, lab) == before
    assert before["open_game_id"] is None
    assert _deals_on(admin_conn, game["seed_commitment"]) == 1

    # The honest counterpart: the same deal given a fresh seed deals.
    fresh = _deal(http, http.operator_key, player_id=lab.id, seed=secrets.token_hex(32))
    assert fresh.status_code == 201, fresh.get_json()
    assert fresh.get_json()["certification"] is True
