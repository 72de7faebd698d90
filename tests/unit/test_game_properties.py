"""Random legal (and some illegal) play from random deals, for every registered game.

One state machine, run once per game in ``service.games.GAMES``: the rules never create, lose or
duplicate a card (sealed cards included), winnings always follow the units, the state is the fold
of the events, every event survives the codec, a refused command changes nothing, the legal
commands are exactly the ones the rules accept, undo restores the table it took back, the player
view never names a sealed card, the game is won exactly when the rules say so, and a game ended
with its seed revealed passes every audit check. A timed duel game (``klondike-duel``) is dealt
to a duel's seat and played on a server clock always inside its five minutes; it ends without
revealing its seed (the duel reveals it), and is audited with the duel's revealed seed.

The suite is generic: what holds of one game family's tables only (its foundations' order, its
piles' shapes) is that game's, in its own tests (``table_invariant`` in
tests/unit/games/test_<module>.py), which the suite runs at every step."""

from __future__ import annotations

import importlib
import json
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import ClassVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import event as note_event
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from events import codec
from events.catalog import (
    CardMoved,
    CardPicked,
    ClockStarted,
    Collected,
    Dealt,
    DealtPile,
    GameEvent,
    PairRemoved,
    StakePlaced,
    Undone,
    Voided,
)
from service import errors
from service.core import game_decider as g
from service.core import shuffle
from service.core.clock import instant
from service.core.game_verification import CHECKS, Revealed, verify_game
from service.core.game_views import player_view
from service.core.paytable import default_paytables, winnings
from service.errors import RuleViolation
from service.games import GAMES
from service.rules import fold as table_fold
from service.rules.cards import Card, canonical_deck
from service.rules.game import GameRules
from service.rules.table import Table, dealt_piles, seal, unseal
from tests.builders import GBP, postings_for, recorded

STAKE = 520
SIMPLE: tuple[g.PlayAction, ...] = (g.Draw(), g.Recycle(), g.Redeal(), g.Undo())
PAYTABLES = default_paytables()
#: Pile ids no game lays out, and Klondike's "whichever foundation fits".
JUNK_PILES = ("nowhere", "tableau:7", "foundation:4", "pyramid:28", "Stock", "", "foundation")
#: A timed game's deal on the server's clock; every later command comes a little after it,
#: never as late as its deadline.
T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
CLOCK_STEP = timedelta(milliseconds=250)
LATEST = timedelta(seconds=290)


def _round_trip(event: GameEvent) -> GameEvent:
    type_name, version, data = codec.encode(event)
    return codec.decode_game(type_name, version, json.loads(json.dumps(data)))


def _table(game: g.Game) -> Table:
    assert game.table is not None
    return game.table


def _same_removal(a: Sequence[str], b: Sequence[str]) -> bool:
    return len(set(a)) == len(a) and set(a) == set(b) and len(a) == len(b)


class GameMachine(RuleBasedStateMachine):
    """Play one game; ``RULES`` is set by the subclass made for each registered game."""

    RULES: ClassVar[GameRules]

    seed: bytes
    deck: tuple[Card, ...]
    sealed: tuple[Card, ...]
    game: g.Game
    events: list[GameEvent]

    # --- helpers --------------------------------------------------------------------------------

    @property
    def game_rules(self) -> GameRules:
        return type(self).RULES

    def _piles(self) -> tuple[str, ...]:
        return self.game_rules.layout.ids

    @property
    def now(self) -> datetime | None:
        """The server's clock for the next command of a timed game (None for any other): a
        quarter second per event recorded so far, always before the deadline."""
        if self.game_rules.time_limit is None:
            return None
        return T0 + min(CLOCK_STEP * (1 + len(self.events)), LATEST)

    def _decide(self, command: g.Command) -> list[GameEvent]:
        redeals = shuffle.redealer(self.seed, None)
        return g.decide(self.game, command, self.sealed, redeals, self.now)

    def _apply(self, command: g.Command) -> list[GameEvent]:
        """Decide and fold one command, checking each new event survives the codec."""
        new = self._decide(command)
        assert new, f"{command!r} succeeded but recorded nothing"
        for event in new:
            assert _round_trip(event) == event
        before = self.game
        state = before
        for event in new:
            # Each card an event shows is the sealed card the deal put in that slot.
            for number, card in table_fold.reveals(_table(state), event):
                assert self.sealed[number] == card
            state = g.evolve(state, event)
        self.game = g.fold(new, before)
        assert self.game == state
        self.events.extend(new)
        assert self.game.version == before.version + len(new)
        return new

    def _try(self, command: g.Command) -> list[GameEvent] | None:
        """Apply a command that may be illegal; a refusal must change nothing."""
        before, count = self.game, len(self.events)
        try:
            return self._apply(command)
        except RuleViolation as exc:
            code = exc.code  # a stable code for the API's problem details
        assert isinstance(code, str)
        assert code
        assert self.game is before
        assert len(self.events) == count
        if before.is_over:
            assert code == errors.GAME_OVER
        elif before.status == "complete":
            assert code == errors.GAME_COMPLETE
        return None

    def _accepts(self, command: g.Command) -> bool:
        try:
            self._decide(command)
        except RuleViolation:
            return False
        return True

    def _legal(self) -> list[g.PlayCommand]:
        return g.legal_commands(self.game)

    # --- the deal -------------------------------------------------------------------------------

    @initialize(seed=st.binary(min_size=32, max_size=32))
    def deal(self, seed: bytes) -> None:
        rules = self.game_rules
        self.seed = seed
        self.deck = shuffle.derive_deck(seed, None, rules.decks)
        assert Counter(self.deck) == Counter(canonical_deck(rules.decks))
        self.sealed = g.hidden_cards(rules, self.deck)
        start = g.StartGame(
            game_id="game-1",
            player_id="player-1",
            variant=rules.id,
            stake=STAKE,
            paytable=GBP,
            deck=self.deck,
            shuffle_algorithm=shuffle.ALGORITHM,
            seed_commitment=shuffle.commitment(seed),
            # A duel's game is dealt only to a duel's seat, on the server's clock.
            duel_id="duel-1" if rules.duel else None,
            now=T0 if rules.time_limit is not None else None,
        )
        self.events = g.decide(g.INITIAL, start, self.sealed)
        for event in self.events:
            assert _round_trip(event) == event
        self.game = g.fold(self.events)
        placed, dealt = self.events[:2]
        assert isinstance(placed, StakePlaced)
        assert (placed.variant, placed.multiplier, placed.max_units) == (
            rules.id,
            rules.multiplier,
            rules.max_units,
        )
        assert isinstance(dealt, Dealt)
        assert dealt.deck is None
        assert dealt.seed_commitment == shuffle.commitment(seed)
        assert placed.duel_id == ("duel-1" if rules.duel else None)
        clocks = [e for e in self.events if isinstance(e, ClockStarted)]
        if rules.time_limit is None:
            assert clocks == []
        else:
            deadline = T0 + timedelta(seconds=rules.time_limit)
            assert self.events[2] == ClockStarted(instant(T0), instant(deadline))
            assert self.game.info is not None
            assert self.game.info.deadline == deadline
        sealed_table, hidden = seal(rules.deal(self.deck))
        assert hidden == self.sealed
        assert dealt.piles == tuple(
            DealtPile(p.pile, p.down, p.up) for p in dealt_piles(sealed_table)
        )
        # The deal names no face-down card (two decks: unless its twin lies face up).
        face_up = {c for p in dealt.piles or () for c in p.up}
        text = json.dumps(codec.encode(dealt)[2])
        assert [c for c in set(self.sealed) - face_up if f'"{c}"' in text] == []
        assert self.game.status == "in_progress"
        assert self.game.variant == rules.id
        assert self.game.seed_commitment == shuffle.commitment(seed)

    # --- legal play -----------------------------------------------------------------------------

    @precondition(lambda self: self.game.status == "in_progress")
    @rule(data=st.data(), steps=st.integers(1, 8))
    def play_legal_commands(self, data: st.DataObject, steps: int) -> None:
        for _ in range(steps):
            legal = self._legal()
            if self.game.status != "in_progress":
                return
            assert legal[-1] == g.Collect()  # collecting is always allowed while the game is open
            choices = [c for c in legal if not isinstance(c, g.Collect)]
            if not choices:
                # Only a game whose stock is spent, with nothing left to play, is stuck.
                assert _table(self.game).count("stock") == 0
                note_event(f"{self.game_rules.id}: stuck")
                return
            # Lean towards scoring (and turning cards up), so games fill their units more often
            # than uniform picks would; now and then draw, or pick any listed command.
            command: g.PlayCommand
            roll = data.draw(st.integers(0, 5))
            favoured = self._scoring(choices) if roll <= 2 else []
            if favoured:
                command = data.draw(st.sampled_from(favoured))
            elif roll == 3 and g.Draw() in choices:
                command = g.Draw()
            else:
                command = data.draw(st.sampled_from(choices))
            self._play_listed(command)

    def _scoring(self, choices: Sequence[g.PlayCommand]) -> list[g.PlayCommand]:
        """The listed commands that raise the units, or turn a card face up."""
        table, units = _table(self.game), self.game.units
        found: list[g.PlayCommand] = [c for c in choices if isinstance(c, g.Turn)]
        for command in choices:
            if isinstance(command, g.Undo | g.Turn):
                continue
            new = self._decide(command)
            if g.fold(new, self.game).units > units:
                found.append(command)
        assert _table(self.game) is table
        return found

    def _play_listed(self, command: g.PlayCommand) -> None:
        before, now = self.game, self.now
        undo = before.undo
        new = self._apply(command)  # a listed command must never be refused
        note_event(f"{self.game_rules.id}: played {type(new[0]).__name__}")
        if isinstance(command, g.MoveCards):
            moved = new[0]
            assert isinstance(moved, CardMoved)
            assert (moved.source, moved.target) == (command.source, command.target)
            assert len(moved.cards) == command.count
        if isinstance(command, g.Remove):
            removed = new[0]
            assert isinstance(removed, PairRemoved)
            assert tuple(c.source for c in removed.cards) == command.piles
        if isinstance(command, g.Undo):
            assert undo is not None
            (undone,) = new
            assert undone == Undone(undo.action, undo.moves)
            assert self.game.table == undo.before
            assert self.game.undo is None
            assert g.Undo() not in self._legal()
            note_event(f"{self.game_rules.id}: undid a {undo.action}")
        if self.game.status == "complete":
            note_event(f"{self.game_rules.id}: won")
        if self.game_rules.time_limit is not None and self.game.is_over:
            # A timed game ends the moment it is won, with the command that won it.
            assert before.status == "in_progress"
            assert new[-1] == Collected(
                reason="finished",
                winnings=0 if self.game_rules.duel else before.winnings,
                currency="GBP",
                units=self.game_rules.max_units,
                ended_at=None if now is None else instant(now),
            )
            note_event(f"{self.game_rules.id}: won and finished")
            self._audit()

    @precondition(lambda self: not self.game.is_over and len(self.events) > 20)
    @rule(roll=st.integers(0, 4), void=st.booleans())
    def sometimes_end_the_game(self, roll: int, void: bool) -> None:
        stuck = g.legal_commands(self.game) == [g.Collect()]
        if roll and not stuck:
            return
        if self.game_rules.duel:
            self._end_a_duel_game(void)
        else:
            self._end_with_the_seed(void)
        assert g.legal_commands(self.game) == []
        self._audit()

    def _end_with_the_seed(self, void: bool) -> None:
        before = self.game
        # Without the revealed seed, or with the wrong one, a committed game never ends.
        with pytest.raises(RuleViolation) as missing:
            g.decide(before, g.Collect())
        assert missing.value.code == errors.SEED_REQUIRED
        wrong = bytes(b ^ 1 for b in self.seed).hex()
        with pytest.raises(RuleViolation) as mismatch:
            g.decide(before, g.Collect(server_seed=wrong))
        assert mismatch.value.code == errors.SEED_MISMATCH
        with pytest.raises(RuleViolation) as deck_instead:
            g.decide(before, g.Void("fault", server_seed=self.seed.hex(), deck=self.deck))
        # A won game is never voided, whatever is revealed (checked before the secret).
        won = before.status == "complete"
        assert deck_instead.value.code == (errors.GAME_COMPLETE if won else errors.SEED_MISMATCH)

        if void and before.status == "complete":
            # A won game is the player's: collected, never voided.
            refused = self._try(g.Void("operator: table fault", server_seed=self.seed.hex()))
            assert refused is None
            void = False
        if void:
            new = self._apply(g.Void("operator: table fault", server_seed=self.seed.hex()))
            assert new == [Voided("operator: table fault", STAKE, "GBP", self.seed.hex(), None)]
            assert self.game.status == "voided"
            assert self.game.refund == STAKE
        else:
            new = self._apply(g.Collect(server_seed=self.seed.hex()))
            assert new == [
                Collected(
                    reason="player",
                    winnings=before.winnings,
                    currency="GBP",
                    units=before.units,
                    server_seed=self.seed.hex(),
                )
            ]
            assert self.game.status == "collected"
            assert self.game.payout == before.winnings
        note_event(f"{self.game_rules.id}: {self.game.status} at {before.units} unit(s)")
        assert self.game.server_seed == self.seed.hex()

    def _end_a_duel_game(self, void: bool) -> None:
        """A duel's game ends without its seed (the duel reveals it) and pays nothing itself."""
        before, now = self.game, self.now
        assert now is not None
        wrong = bytes(b ^ 1 for b in self.seed).hex()
        for revealing in (
            g.Collect(server_seed=self.seed.hex()),
            g.Collect(server_seed=wrong),
            g.Void("fault", server_seed=self.seed.hex()),
        ):
            with pytest.raises(RuleViolation) as refused:
                self._decide(revealing)
            assert refused.value.code == errors.SEED_MISMATCH
        if void:
            new = self._apply(g.Void("operator: table fault"))
            assert new == [Voided("operator: table fault", 0, "GBP", None, None)]
            assert self.game.status == "voided"
            assert self.game.refund == 0
        else:
            new = self._apply(g.Collect())
            assert new == [Collected("player", 0, "GBP", before.units, None, None, instant(now))]
            assert self.game.status == "collected"
            assert self.game.payout == 0
        note_event(f"{self.game_rules.id}: {self.game.status} at {before.units} unit(s)")
        assert self.game.server_seed is None

    def _audit(self) -> None:
        """Once its seed is revealed (a duel's game: by its duel), the whole game passes every
        audit check."""
        records = recorded("game-1", self.events)
        postings = postings_for("game-1", self.events)
        duel = Revealed(self.seed.hex()) if self.game_rules.duel else None
        result = verify_game(records, postings, PAYTABLES, duel=duel)
        assert result.findings == []
        assert result.checks == dict.fromkeys(CHECKS, "pass")
        assert result.state == self.game
        for number, card in g.sealed_from_stream(self.events).items():
            assert self.sealed[number] == card

    # --- arbitrary, often illegal, commands -----------------------------------------------------

    @rule(data=st.data(), kind=st.sampled_from(("move", "move", "remove", "turn", "pick", "other")))
    def try_a_random_command(self, data: st.DataObject, kind: str) -> None:
        """Any command, mostly illegal: one the rules accept is one they list."""
        own = st.sampled_from(self._piles())
        piles = own | st.sampled_from(JUNK_PILES)
        legal = self._legal()
        if kind == "move":
            count = data.draw(st.none() | st.integers(-1, 14))
            move = g.MoveCards(data.draw(piles), data.draw(piles), count)
            new = self._try(move)
            if move in legal:
                assert new is not None
            if new is not None:
                moved = new[0]
                assert isinstance(moved, CardMoved)
                # Whatever the rules accept is among the moves they list.
                assert g.MoveCards(moved.source, moved.target, len(moved.cards)) in legal
        elif kind == "remove":
            size = data.draw(st.integers(0, 3))
            removal = g.Remove(tuple(data.draw(piles) for _ in range(size)))
            new = self._try(removal)
            listed = any(
                isinstance(c, g.Remove) and _same_removal(removal.piles, c.piles) for c in legal
            )
            assert (new is not None) == listed
            if new is not None:
                removed = new[0]
                assert isinstance(removed, PairRemoved)
                assert tuple(c.source for c in removed.cards) == removal.piles
        elif kind == "pick":
            pick = g.Pick(data.draw(piles), data.draw(st.sampled_from(self.deck)), data.draw(piles))
            new = self._try(pick)
            if new is not None:
                picked = new[0]
                assert isinstance(picked, CardPicked)
                # What the rules accept is listed, with the pile it landed on.
                assert g.Pick(pick.source, pick.card, picked.target) in legal
            elif pick in legal:
                raise AssertionError(f"{pick} is listed but refused")
        else:
            command: g.PlayAction = (
                g.Turn(data.draw(piles)) if kind == "turn" else data.draw(st.sampled_from(SIMPLE))
            )
            new = self._try(command)
            # Draw, recycle, undo and turn succeed exactly when they are listed as legal.
            assert (new is not None) == (command in legal)

    @precondition(lambda self: self.game.status == "in_progress")
    @rule(data=st.data())
    def listed_commands_are_exactly_the_accepted_ones(self, data: st.DataObject) -> None:
        """From one pile: every move (any count up to one too many), removal and turn the rules
        accept is listed, and every listed one is accepted."""
        table = _table(self.game)
        ids = self._piles()
        source = data.draw(st.sampled_from(ids))
        legal = self._legal()
        moves = {c for c in legal if isinstance(c, g.MoveCards)}
        removals = [c.piles for c in legal if isinstance(c, g.Remove)]
        for target in ids:
            for count in range(1, len(table.pile(source).up) + 2):
                command = g.MoveCards(source, target, count)
                assert self._accepts(command) == (command in moves), command
        for piles in [(source,)] + [(source, t) for t in ids]:
            listed = any(_same_removal(piles, r) for r in removals)
            assert self._accepts(g.Remove(piles)) == listed, piles
        for pile in ids:
            assert self._accepts(g.Turn(pile)) == (g.Turn(pile) in legal), pile
        for card in {c for c in table.pile(source).cards if isinstance(c, str)}:
            for target in ids:
                pick = g.Pick(source, card, target)
                assert self._accepts(pick) == (pick in legal), pick
        for simple in SIMPLE:
            assert self._accepts(simple) == (simple in legal), simple
        for offered in legal:
            if not isinstance(offered, g.Collect):
                assert self._accepts(offered), offered

    # --- invariants -----------------------------------------------------------------------------

    @invariant()
    def check_every_invariant(self) -> None:
        self.no_card_is_created_lost_or_duplicated()
        self.winnings_follow_the_units()
        self.state_is_the_fold_of_every_event()
        self.won_exactly_when_the_rules_say_so()
        self.piles_stay_well_formed()
        self.player_view_never_names_a_sealed_card()

    def no_card_is_created_lost_or_duplicated(self) -> None:
        table = _table(self.game)
        for pile in table.piles:
            assert 0 <= pile.down <= len(pile.cards)
            assert all(isinstance(slot, str) for slot in pile.up), pile
        sealed_slots = [s for s in table.slots() if isinstance(s, int)]
        assert len(set(sealed_slots)) == len(sealed_slots)
        assert all(0 <= s < len(self.sealed) for s in sealed_slots)
        cards = Counter(unseal(table, self.sealed).slots())
        assert cards == Counter(self.deck)

    def winnings_follow_the_units(self) -> None:
        rules, game = self.game_rules, self.game
        units = rules.units(_table(game))
        assert game.units == units
        assert 0 <= units <= rules.max_units
        assert game.info is not None
        assert (game.info.multiplier, game.max_units) == (rules.multiplier, rules.max_units)
        if rules.duel:  # a duel's game pays nothing itself: the duel pays from its pot
            assert (game.winnings, game.win_rate) == (0, 0)
            return
        expected = winnings(units, STAKE, rules.multiplier, rules.max_units)
        assert game.winnings == expected
        assert game.win_rate == winnings(1, STAKE, rules.multiplier, rules.max_units)
        if units == rules.max_units:
            assert game.winnings == winnings(1, STAKE, rules.multiplier, 1)

    def state_is_the_fold_of_every_event(self) -> None:
        assert g.fold(self.events, g.INITIAL) == self.game
        assert self.game.version == len(self.events)

    def won_exactly_when_the_rules_say_so(self) -> None:
        won = self.game_rules.is_won(_table(self.game))
        if not self.game.is_over:
            assert (self.game.status == "complete") == won
        if self.game.status == "complete":
            assert g.legal_commands(self.game) == [g.Collect()]

    def piles_stay_well_formed(self) -> None:
        rules, table = self.game_rules, _table(self.game)
        if rules.passes is None:
            assert table.passes_left is None
        else:
            assert table.passes_left is not None
            assert 0 <= table.passes_left <= rules.passes
        wastes = [table.piles[i] for i in table.layout.of_kind("waste")]
        assert len(wastes) <= 1
        for waste in wastes:
            assert 0 <= table.fan <= min(len(waste.cards), rules.draw_count)
            assert waste.down == 0
        if not wastes:  # a game without a waste (Scorpion) keeps no fan
            assert table.fan == 0
        if rules.picks is None:
            assert table.picks_left is None
        # What the game's own tests say holds of its every table.
        own = TABLE_INVARIANTS.get(type(rules).__module__)
        if own is not None:
            own(rules, table, self.deck)

    def player_view_never_names_a_sealed_card(self) -> None:
        table = _table(self.game)
        seen = {s for s in table.slots() if isinstance(s, str)}
        # Two decks hold every code twice: judge only codes nowhere in sight.
        sealed = {self.sealed[s] for s in table.slots() if isinstance(s, int)} - seen
        view = player_view(self.game)
        text = json.dumps(view)
        assert sorted(c for c in sealed if f'"{c}"' in text) == []
        for shown, pile in zip(view["piles"], table.piles, strict=True):
            assert (shown["count"], shown["face_down"]) == (len(pile.cards), pile.down)
            assert shown["cards"] == [c for c in shown["cards"] if c in pile.up]
        revealed = self.game.is_over and not self.game_rules.duel  # a duel reveals its own
        assert view["server_seed"] == (self.seed.hex() if revealed else None)
        assert view["stock_count"] == table.count("stock")
        assert view["units"] == self.game.units
        assert view["winnings"] == self.game.winnings


def _table_invariants() -> dict[str, TableInvariant]:
    """Each game module's own invariant, from its tests (tests/unit/games/test_<module>.py,
    ``table_invariant``): the suite stays generic, and a game brings its own."""
    found: dict[str, TableInvariant] = {}
    for module in {type(rules).__module__ for rules in GAMES.values()}:
        name = module.rsplit(".", 1)[1]
        tests = importlib.import_module(f"tests.unit.games.test_{name}")
        found[module] = tests.table_invariant
    return found


TableInvariant = Callable[[GameRules, Table, tuple[Card, ...]], None]
TABLE_INVARIANTS = _table_invariants()


SETTINGS = settings(
    max_examples=25,
    stateful_step_count=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _machine_for(rules: GameRules) -> type[GameMachine]:
    """The machine playing one game (a subclass per game, so each keeps its own examples)."""
    name = "".join(part.title() for part in rules.id.replace("-", " ").split())
    return type(f"{name}Machine", (GameMachine,), {"RULES": rules})


MACHINES: dict[str, type[GameMachine]] = {game_id: _machine_for(r) for game_id, r in GAMES.items()}


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_random_play(game_id: str) -> None:
    run_state_machine_as_test(MACHINES[game_id], settings=SETTINGS)


def test_every_game_module_s_tests_bring_its_own_table_invariant() -> None:
    assert set(TABLE_INVARIANTS) == {type(rules).__module__ for rules in GAMES.values()}


def test_every_registered_game_has_its_random_play() -> None:
    assert set(MACHINES) == set(GAMES)
    for game_id, machine in MACHINES.items():
        assert machine.RULES is GAMES[game_id]
