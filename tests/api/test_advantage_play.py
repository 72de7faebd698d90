"""Advantage play watched (GLI-19 A.6.1-A.6.2): a scripted player who wins every game (a
certification player fed solved deals) is flagged, an ordinary player is not, each flag is a
significant event logged once a day, and finance's daily report lists it."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from service.bootstrap import Container
from service.core.paytable import winnings
from service.rtp.advantage import MIN_GAMES
from service.rtp.published import publication
from service.services import advantage
from tests.api.client import Http
from tests.api.factories import WalletFactory
from tests.api.play import golf_clearing, golf_winning_deck, legal, played
from tests.api.real_money import FUNDS, Session


def _solved_golf_games(session: Session, games: int) -> None:
    """Certification deals of a deck cleared to the last card, played to the end."""
    for _ in range(games):
        game_id, _ = session.deal("golf", 520, deck=golf_winning_deck())
        session.play(game_id, action="draw")
        for body in golf_clearing():
            session.play(game_id, **body)
        session.collect(game_id, "golf", 520, 35)


def _ordinary_golf_games(http: Http, token: str, games: int) -> None:
    """Real-money deals the player shuffles for themselves, played the obvious way: the first
    legal column move, else a draw, then collect."""
    for _ in range(games):
        dealt = http.post("/v1/games", token, json={"variant": "golf", "stake": 104})
        assert dealt.status_code == 201, dealt.get_json()
        view: dict[str, Any] = dealt.get_json()
        while nxt := (legal(view, "move") or legal(view, "draw")):
            view = played(http, token, view["id"], nxt[0])
        played(http, token, view["id"], {"action": "collect"})


def _mine(found: list[advantage.Report], player_id: str) -> list[advantage.Report]:
    return [r for r in found if r.player_id is not None and str(r.player_id) == player_id]


def test_a_player_who_wins_every_game_is_flagged_once_and_reported(
    http: Http, container: Container, session: Session
) -> None:
    golf = publication("golf")
    assert golf is not None
    assert golf.strong is not None
    ordinary = WalletFactory.create(balance=FUNDS).player
    _solved_golf_games(session, MIN_GAMES - 1)
    _ordinary_golf_games(http, ordinary.token, MIN_GAMES)

    def watch() -> list[advantage.Report]:
        return advantage.run(
            container.unit_of_work, container.settings.paytables, datetime.now(UTC)
        )

    # Too few games to judge: nothing yet, however well they went.
    assert _mine(watch(), session.player.id) == []
    _solved_golf_games(session, 1)

    flagged = _mine(watch(), session.player.id)
    assert len(flagged) == 1
    (report,) = flagged
    assert report.logged
    assert report.certification
    assert report.currency == "XTS"
    assert report.subject == f"player:{session.player.id}:golf:sandbox"
    found = report.flag.found
    assert found.games == MIN_GAMES
    # Every game paid a full win (M x the stake, rounded down): one return, with no spread.
    assert found.paid == MIN_GAMES * winnings(35, 520, golf.multiplier, 35)
    assert found.rtp == found.low == found.high == Decimal(f"{found.paid / found.staked:.4f}")
    assert report.flag.strong_rtp == Decimal(golf.strong.rtp) < found.low
    # The ordinary player lost money on the whole and is not flagged.
    assert _mine(watch(), ordinary.id) == []

    # A second run the same day finds it again but logs it once (Celery delivers twice).
    again = _mine(watch(), session.player.id)
    assert [r.logged for r in again] == [False]
    with container.unit_of_work() as uow:
        logged = [
            e
            for e in uow.significant.page(kind="advantage-play", limit=500)
            if e.player_id is not None and str(e.player_id) == session.player.id
        ]
    assert len(logged) == 1
    assert logged[0].details["games"] == MIN_GAMES
    assert logged[0].actor == advantage.WATCHER

    # Finance's daily report of the sandbox lists it; the real currency's does not.
    today = datetime.now(UTC).date()
    span = f"from={today}&to={today}"
    sandbox = http.get(f"/v1/reports/daily?{span}&currency=XTS", http.finance_key).get_json()
    rows = [r for r in sandbox["advantage_play"] if r["player_id"] == session.player.id]
    assert len(rows) == 1
    assert (rows[0]["on"], rows[0]["variant"], rows[0]["games"]) == ("player", "golf", 30)
    assert rows[0]["strong_rtp"] == golf.strong.rtp
    real = http.get(f"/v1/reports/daily?{span}&currency=GBP", http.finance_key).get_json()
    assert all(r["player_id"] != session.player.id for r in real["advantage_play"])
