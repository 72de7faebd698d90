"""The load: simulated players, one thread each, paying in, dealing, playing random legal
commands and collecting, again and again, each request with its own Idempotency-Key and
retried with it. What each was told is recorded for the checks."""

from __future__ import annotations

import random
import threading
import traceback
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tests.drill.checks import Acks, Command, Deal, Deposit, Settled
from tests.drill.client import NO_BODY, Answer, Api, Timeline

VARIANTS = ("vegas-draw1", "vegas-draw3", "klondike", "golf", "pyramid")
AMOUNTS = (1_000, 2_500, 5_000, 20_000)
OPENING_DEPOSIT = 50_000


@dataclass
class Stats:
    """Per logical request (all its attempts together)."""

    requests: int = 0
    acknowledged: int = 0
    retried: int = 0
    extra_attempts: int = 0
    replayed: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    unresolved: Counter[str] = field(default_factory=Counter)
    client_errors: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count(self, kind: str, answer: Answer) -> None:
        with self._lock:
            self.requests += 1
            self.acknowledged += answer.ok
            self.retried += answer.attempts > 1
            self.extra_attempts += answer.attempts - 1
            self.replayed += answer.replayed
            if answer.status is None:
                self.unresolved[kind] += 1
            elif not answer.ok:
                problem = answer.body.get("type", "") if isinstance(answer.body, dict) else ""
                self.refused[f"{kind} {answer.status} {problem.rsplit('/', 1)[-1]}"] += 1

    def error(self, text: str) -> None:
        with self._lock:
            self.client_errors.append(text)


@dataclass(frozen=True)
class Shared:
    """What every player thread shares."""

    base: str
    operator: str
    run_id: str
    stakes: tuple[int, ...]
    timeline: Timeline
    acks: Acks
    stats: Stats
    stop: threading.Event
    deadline: float


class Player(threading.Thread):
    def __init__(self, index: int, shared: Shared) -> None:
        super().__init__(name=f"drill-player-{index}", daemon=True)
        self.index = index
        self.shared = shared
        self.api = Api(shared.base, shared.timeline, shared.deadline)
        self.rng = random.Random(f"{shared.run_id}-{index}")
        self.player_id: str | None = None
        self.token = ""
        self.transfers = 0
        self.need_funds = True

    # --- one request, counted and recorded -------------------------------------------------

    def _post(self, kind: str, path: str, token: str, body: Any = NO_BODY) -> Answer:
        answer = self.api.post(path, token, body)
        self.shared.acks.sending(answer.request_id, deal=kind == "deal")
        self.shared.stats.count(kind, answer)
        if answer.status == 401 and token == self.token:
            self._mint_session()  # the session expired: a real front-end logs in again
        return answer

    def _get(self, path: str) -> Any:
        answer = self.api.get(path, self.token)
        return answer.body if answer.ok else None

    # --- the player's life -----------------------------------------------------------------

    def run(self) -> None:
        try:
            self.setup()
            while not self.shared.stop.is_set():
                if self.need_funds or self.rng.random() < 0.25:
                    self.deposit(self.rng.choice(AMOUNTS))
                view = self.deal()
                if view is not None:
                    self.play(view)
        except Exception:
            self.shared.stats.error(f"{self.name}: {traceback.format_exc()}")
        finally:
            try:
                self.finish()
            except Exception:
                self.shared.stats.error(f"{self.name} finishing: {traceback.format_exc()}")

    def setup(self) -> None:
        ref = f"drill-{self.shared.run_id}-{self.index}"
        while self.player_id is None and not self.shared.stop.is_set():
            body = {"external_ref": ref, "currency": "GBP"}
            opened = self._post("open", "/v1/players", self.shared.operator, body)
            if opened.ok:
                self.player_id = opened.body["id"]
        if self.player_id is not None:
            self._mint_session()
            self.deposit(OPENING_DEPOSIT)

    def _mint_session(self) -> None:
        path = f"/v1/players/{self.player_id}/sessions"
        while not self.shared.stop.is_set():
            minted = self.api.post(path, self.shared.operator)
            if minted.ok:
                self.token = minted.body["token"]
                return

    def deposit(self, amount: int) -> None:
        self.transfers += 1
        transaction_id = f"drill-{self.shared.run_id}-{self.index}-{self.transfers}"
        answer = self._post(
            "deposit",
            f"/v1/players/{self.player_id}/deposits",
            self.shared.operator,
            {"amount": amount, "transaction_id": transaction_id},
        )
        if answer.ok:
            assert self.player_id is not None
            ack = Deposit(answer.request_id, self.player_id, transaction_id, amount)
            self.shared.acks.add(ack)
            self.need_funds = False

    def deal(self) -> dict[str, Any] | None:
        """A new game's view; or the open game this player already has (a deal whose answer
        never came may have been made); None if there is none to play."""
        stake = self.rng.choice(self.shared.stakes)
        body = {"variant": self.rng.choice(VARIANTS), "stake": stake}
        answer = self._post("deal", "/v1/games", self.token, body)
        if answer.ok:
            assert self.player_id is not None
            game: dict[str, Any] = answer.body
            self.shared.acks.add(Deal(answer.request_id, self.player_id, game["id"], stake))
            return game
        open_game = self.open_game()
        if open_game is None and answer.status is not None:
            self.need_funds = True  # refused with no game open: the balance did not cover it
        return open_game

    def open_game(self) -> dict[str, Any] | None:
        wallet = self._get(f"/v1/players/{self.player_id}/wallet")
        if not wallet or not wallet.get("open_game_id"):
            return None
        found: dict[str, Any] | None = self._get(f"/v1/games/{wallet['open_game_id']}")
        return found

    def play(self, view: dict[str, Any]) -> None:
        game_id = view["id"]
        for _ in range(self.rng.randint(3, 30)):
            if self.shared.stop.is_set() or view["status"] != "in_progress":
                break
            moves = [m for m in view["legal_moves"] if m["action"] != "collect"]
            if not moves:
                break
            answer = self._post(
                "command", f"/v1/games/{game_id}/actions", self.token, self.rng.choice(moves)
            )
            if not answer.ok:
                break  # refused or unanswered: collect whatever the game now is
            view = answer.body
            self._acknowledged(answer, view)
        if view["status"] == "in_progress":
            self.collect(game_id)

    def collect(self, game_id: str) -> None:
        answer = self._post("collect", f"/v1/games/{game_id}/collect", self.token)
        if answer.ok:
            self._acknowledged(answer, answer.body)

    def _acknowledged(self, answer: Answer, view: dict[str, Any]) -> None:
        acks = self.shared.acks
        acks.add(Command(answer.request_id, view["id"], view["version"]))
        if view["status"] != "in_progress":
            acks.add(Settled(answer.request_id, view["id"], view["status"], view["payout"] or 0))

    def finish(self) -> bool:
        """Collect this player's open game, if any; whether none is left open."""
        if self.player_id is None or not self.token:
            return True
        view = self.open_game()
        if view is None:
            return True
        self.collect(view["id"])
        return self.open_game() is None

    def close(self) -> None:
        self.api.close()
