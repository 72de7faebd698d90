"""The wallet drill (`DRILL_WALLET=faults make drill`, issue 37): the service in seamless mode,
as `make run` starts it, against the reference operator wallet in a process of its own, which
injects every fault it knows at random while simulated players deal, play and collect through
the API for a few minutes; then the faults stop, the worker drains what is due, and the drill
judges both sides' books: the wallet's own journal and balances against the server's ledger and
records. It prints the rounds by final state, the figures that must be 0, and how long wins and
rollbacks took to be acknowledged; it exits 1 if any of those is not 0."""

from __future__ import annotations

import random
import re
import shutil
import statistics
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import requests

from service.core.seamless import to_wire
from tests.drill.service import EmbeddedDatabase, Service, free_port
from tests.wallet.harness import RunningWallet, running_wallet

#: The wallet's call timeout for the drill's service (and so its faults' delays).
TIMEOUT_MS = 1_000
CURRENCY = "GBP"
STAKES = (104, 260, 520)  # on the GBP ladder
FUNDS = 200_000  # £2,000 a player at the operator
#: How often the wallet plays each fault, per call of its method.
PROBABILITY = 0.04
#: A card code standing on its own in JSON text (tests/api/play.py's).
CARD = re.compile(r"(?<![0-9A-Za-z])([A2-9TJQK][SHDC])(?![0-9A-Za-z])")


def faults() -> list[dict[str, Any]]:
    """Every fault the reference wallet knows, on every method it applies to, at random."""
    chosen: list[dict[str, Any]] = []
    for method in ("bet", "win", "rollback"):
        for when in ("before", "after"):
            chosen += [
                {"kind": "timeout", "delay_ms": TIMEOUT_MS * 2, "when": when},
                {"kind": "error", "status": 500, "when": when},
                {"kind": "error", "status": 503, "when": when},
                {"kind": "not_json", "when": when},
                {"kind": "bad_signature", "when": when},
                {"kind": "slow", "delay_ms": int(TIMEOUT_MS * 0.5), "when": when},
                {"kind": "slow", "delay_ms": int(TIMEOUT_MS * 1.3), "when": when},
            ]
            for fault in chosen[-7:]:
                fault["method"] = method
        if method == "bet":
            chosen.append({"method": "bet", "kind": "not_enough_money", "when": "before"})
    for fault in chosen:
        fault |= {"count": None, "probability": PROBABILITY, "seed": random.randrange(1 << 30)}
    return chosen


@dataclass
class Tally:
    lock: threading.Lock = field(default_factory=threading.Lock)
    deals: Counter[str] = field(default_factory=Counter)
    collects: Counter[str] = field(default_factory=Counter)
    #: Cards in an answer that dealt nothing (must be none).
    revealed: list[str] = field(default_factory=list)
    #: 500s and other answers no client should get.
    bugs: list[str] = field(default_factory=list)

    def deal(self, outcome: str) -> None:
        with self.lock:
            self.deals[outcome] += 1


@dataclass
class Player:
    id: str
    external_ref: str
    token: str


class WalletDrill:
    def __init__(self, clients: int, seconds: float, keep: bool) -> None:
        self.clients = clients
        self.seconds = seconds
        self.keep = keep
        self.folder = Path(tempfile.mkdtemp(prefix="drill-wallet-"))
        self.tally = Tally()

    def log(self, text: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)

    def run(self) -> bool:
        with running_wallet(self.folder / "wallet") as wallet:
            files = wallet.keys.write(self.folder / "keys")
            service = Service(self.folder / "service", free_port(), None)
            service.data_dir.mkdir(parents=True, exist_ok=True)
            service.env |= {
                "WALLET_MODE": "seamless",
                "WALLET_URL": wallet.url,
                "WALLET_SIGNING_KEY_FILE": str(files.supplier_private),
                "WALLET_OPERATOR_KEY_FILE": str(files.operator_public),
                "WALLET_TIMEOUT_MS": str(TIMEOUT_MS),
                "WALLET_RETRY_MAX_SECONDS": "2",
                "WALLET_SWEEP_EVERY_SECONDS": "1",
            }
            service.start()
            try:
                self.log(f"service on {service.base}: {service.wait_ready(600):.0f} s to ready")
                operator = service.create_key("operator", "wallet-drill")
                players = [
                    self._player(service.base, operator, wallet) for _ in range(self.clients)
                ]
                for fault in faults():
                    wallet.admin("POST", "faults", fault)
                self.log(f"{len(players)} players for {self.seconds:.0f} s, every fault at random")
                self._load(service.base, players, wallet)
                wallet.admin("DELETE", "faults")
                database = EmbeddedDatabase(service.data_dir).url()
                drained = self._drain(database)
                self.log(f"drained in {drained:.1f} s")
                ok = self._judge(database, wallet, players)
            finally:
                left = service.stop()
                if left:
                    self.log(f"processes left after the stop: {left}")
        if ok and not self.keep:
            shutil.rmtree(self.folder, ignore_errors=True)
        else:
            self.log(f"kept {self.folder}")
        return ok

    # --- players and load ---------------------------------------------------------------------

    def _player(self, base: str, operator: str, wallet: RunningWallet) -> Player:
        ref = f"drill-{uuid.uuid4()}"
        wallet.admin(
            "POST",
            "users",
            {"user": ref, "currency": CURRENCY, "balance": to_wire(FUNDS, CURRENCY)},
        )
        wallet_token = wallet.admin("POST", "tokens", {"user": ref})["token"]
        staff = {"Authorization": f"Bearer {operator}"}
        opened = requests.post(
            f"{base}/v1/players",
            json={"external_ref": ref, "currency": CURRENCY},
            headers=staff,
            timeout=30,
        )
        opened.raise_for_status()
        player_id = opened.json()["id"]
        session = requests.post(
            f"{base}/v1/players/{player_id}/sessions",
            json={"wallet_token": wallet_token},
            headers=staff,
            timeout=30,
        )
        session.raise_for_status()
        return Player(player_id, ref, session.json()["token"])

    def _load(self, base: str, players: list[Player], wallet: RunningWallet) -> None:
        end = time.monotonic() + self.seconds
        outage_at = time.monotonic() + self.seconds * 0.5
        threads = [
            threading.Thread(target=self._client, args=(base, p, end), daemon=True) for p in players
        ]
        for thread in threads:
            thread.start()
        time.sleep(max(0.0, outage_at - time.monotonic()))
        wallet.admin("POST", "outage", {"duration_ms": 5_000, "mode": "503"})
        self.log("the wallet down for 5 s")
        for thread in threads:
            thread.join(self.seconds + 120)

    def _client(self, base: str, player: Player, end: float) -> None:
        http = requests.Session()
        http.headers["Authorization"] = f"Bearer {player.token}"
        rng = random.Random()
        while time.monotonic() < end:
            try:
                self._round(http, base, rng)
            except requests.RequestException as exc:
                with self.tally.lock:
                    self.tally.bugs.append(f"no answer: {type(exc).__name__}")
                time.sleep(0.5)

    def _round(self, http: requests.Session, base: str, rng: random.Random) -> None:
        body = {"variant": "vegas-draw1", "stake": rng.choice(STAKES)}
        dealt = http.post(f"{base}/v1/games", json=body, timeout=30)
        if dealt.status_code != 201:
            text = dealt.text
            if CARD.search(text):
                with self.tally.lock:
                    self.tally.revealed.append(text[:200])
            slug = _slug(dealt)
            self.tally.deal(slug)
            if slug == "game-in-progress":
                game_id = dealt.json().get("game_id")
                if game_id:
                    self._collect(http, base, game_id)
            elif dealt.status_code >= 500 and slug != "wallet-unavailable":
                with self.tally.lock:
                    self.tally.bugs.append(f"deal {dealt.status_code}: {text[:200]}")
            time.sleep(0.2 if slug == "wallet-unsettled" else 0.05)
            return
        self.tally.deal("dealt")
        view = dealt.json()
        game_id = view["id"]
        for _ in range(rng.randrange(0, 6)):
            legal = [m for m in view.get("legal_moves", []) if m.get("action") != "collect"]
            if not legal:
                break
            played = http.post(
                f"{base}/v1/games/{game_id}/actions", json=rng.choice(legal), timeout=30
            )
            if played.status_code != 200:
                break
            view = played.json()
            if view.get("status") != "in_progress":
                break
        self._collect(http, base, game_id)

    def _collect(self, http: requests.Session, base: str, game_id: str) -> None:
        done = http.post(f"{base}/v1/games/{game_id}/collect", json={}, timeout=30)
        with self.tally.lock:
            if done.status_code == 200:
                self.tally.collects[str(done.json().get("payout_status"))] += 1
            else:
                self.tally.collects[_slug(done)] += 1
                if done.status_code >= 500:
                    self.tally.bugs.append(f"collect {done.status_code}: {done.text[:200]}")

    # --- the drain and the books ------------------------------------------------------------------

    def _drain(self, database: str, deadline: float = 180.0) -> float:
        started = time.monotonic()
        while time.monotonic() - started < deadline:
            with psycopg.connect(database) as conn:
                row = conn.execute(
                    "SELECT count(*) FROM wallet_transactions WHERE state IN ('due', 'sent')"
                ).fetchone()
            if row is not None and row[0] == 0:
                break
            time.sleep(1)
        return time.monotonic() - started

    def _judge(self, database: str, wallet: RunningWallet, players: list[Player]) -> bool:
        journal = wallet.journal()
        with psycopg.connect(database) as conn:
            rows = conn.execute(
                "SELECT round_id, method, state, attempts, review_reason,"
                "       extract(epoch FROM final_at - created_at) FROM wallet_transactions"
            ).fetchall()
            mirrors: dict[str, int] = dict(
                conn.execute(
                    "SELECT account_id, balance FROM account_balances"
                    " WHERE kind IN ('operator-wallet', 'player')"
                ).fetchall()
            )
            unbet = conn.execute(
                "SELECT count(*) FROM events g WHERE g.type = 'StakePlaced'"
                "   AND g.stream_id LIKE 'game-%%'"
                "   AND NOT coalesce((g.data->>'certification')::bool, false)"
                "   AND NOT EXISTS (SELECT 1 FROM events a"
                "    WHERE a.stream_id = 'wallet-' || substr(g.stream_id, 6)"
                "      AND a.type = 'WalletCallAnswered' AND a.data->>'method' = 'bet'"
                "      AND a.data->>'outcome' = 'confirmed' AND a.position < g.position)"
            ).fetchone()
        rounds: dict[str, dict[str, str]] = {}
        for round_id, method, state, *_ in rows:
            rounds.setdefault(str(round_id), {})[str(method)] = str(state)
        by_state = Counter(_round_state(r) for r in rounds.values())
        differences = 0
        for p in players:
            held = wallet.admin("GET", f"users/{p.external_ref}")["balance"]
            mirror = mirrors.get(f"operator-wallet:{p.id}", 0)
            if held != to_wire(FUNDS + mirror, CURRENCY):
                differences += 1
        ids = Counter(str(e["transaction_uuid"]) for e in journal)
        applied_twice = sum(n - 1 for n in ids.values() if n > 1)
        won = {str(e["reference_transaction_uuid"]) for e in journal if e["kind"] == "win"}
        wins_rolled_back = sum(
            1
            for e in journal
            if e["kind"] == "rollback" and str(e["reference_transaction_uuid"]) in won
        )
        rolled: set[str] = set()
        after_rollback = 0
        for e in journal:
            if e["kind"] == "rollback":
                rolled.add(str(e["reference_transaction_uuid"]))
            elif e["kind"] == "bet" and str(e["transaction_uuid"]) in rolled:
                after_rollback += 1
        unsettled = sum(1 for _, _, state, *_ in rows if state in ("due", "sent"))
        reviews = [(str(m), str(r)) for _, m, state, _, r, _ in rows if state == "review"]
        unnamed_reviews = sum(1 for _, reason in reviews if not reason or reason == "None")
        self.log(f"deals: {dict(self.tally.deals)}")
        self.log(f"collects (payout_status): {dict(self.tally.collects)}")
        self.log(f"rounds by final state: {dict(by_state)}")
        for method, reason in reviews[:10]:
            self.log(f"  review: {method}: {reason}")
        for method in ("win", "rollback"):
            taken = [
                float(t)
                for _, m, s, _, _, t in rows
                if m == method and s == "confirmed" and t is not None
            ]
            tries = [int(a) for _, m, s, a, _, _ in rows if m == method and s == "confirmed"]
            if taken:
                self.log(
                    f"{method}s to acknowledgement: p50 {_pct(taken, 50):.2f} s, "
                    f"p99 {_pct(taken, 99):.2f} s, max {max(taken):.2f} s over {len(taken)}; "
                    f"calls each: mean {statistics.mean(tries):.2f}, max {max(tries)}"
                )
        must_be_zero = {
            "balance differences (wallet vs server), players": differences,
            "money applied twice": applied_twice,
            "wins rolled back": wins_rolled_back,
            "cards revealed without a confirmed bet (answers)": len(self.tally.revealed),
            "games dealt without a confirmed bet (log)": int(unbet[0]) if unbet else -1,
            "bets applied after their rollback": after_rollback,
            "rounds unsettled after the drain": unsettled,
            "reviews without a named reason": unnamed_reviews,
            "500s and lost answers": len(self.tally.bugs),
        }
        ok = True
        for what, count in must_be_zero.items():
            mark = "ok" if count == 0 else "FAIL"
            ok = ok and count == 0
            self.log(f"{what}: {count} (must be 0) {mark}")
        for bug in self.tally.bugs[:5]:
            self.log(f"  {bug}")
        return ok


def _slug(response: requests.Response) -> str:
    try:
        found = response.json()
    except ValueError:
        return f"http-{response.status_code}"
    kind = found.get("type", "") if isinstance(found, dict) else ""
    return str(kind).rsplit("/", 1)[-1] or f"http-{response.status_code}"


def _round_state(movements: dict[str, str]) -> str:
    bet = movements.get("bet")
    if "review" in movements.values():
        return "review"
    if bet == "refused":
        return "bet refused"
    if "rollback" in movements:
        return "rolled back" if movements["rollback"] == "confirmed" else "rollback unsettled"
    if "win" in movements:
        return "won, credited" if movements["win"] == "confirmed" else "win unsettled"
    return f"bet {bet}, in play" if bet == "confirmed" else f"bet {bet}"


def _pct(values: list[float], q: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def main(clients: int, seconds: float, keep: bool) -> int:
    drill = WalletDrill(clients, seconds, keep)
    return 0 if drill.run() else 1
