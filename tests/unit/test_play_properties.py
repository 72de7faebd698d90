"""Random legal (and some illegal) play from random deals: the rules never create, lose or
duplicate a card, winnings always follow the foundations, the state is the fold of the events,
every event survives the codec, and the player view never shows a hidden card."""

from __future__ import annotations

import json

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
)

from events import codec
from events.catalog import AutoCompleted, CardMoved, Collected, GameEvent
from service import errors, shuffle
from service import game as g
from service.cards import CANONICAL_DECK, builds_on_foundation, builds_on_tableau
from service.errors import RuleViolation
from service.klondike import Layout
from service.views import player_view
from tests.builders import start

VARIANTS = {"vegas-draw1": (1, 1), "vegas-draw3": (3, 3)}  # name -> (draw count, passes)
PILES = (
    "stock",
    "waste",
    "foundation",
    *(f"tableau:{i}" for i in range(7)),
    *(f"foundation:{i}" for i in range(4)),
    "tableau:7",
    "foundation:4",
    "nowhere",
)


def _round_trip(event: GameEvent) -> GameEvent:
    type_name, version, data = codec.encode(event)
    stored = json.loads(json.dumps(data))
    return codec.decode_game(type_name, version, stored)


def _layout(game: g.Game) -> Layout:
    assert game.layout is not None
    return game.layout


class PlayMachine(RuleBasedStateMachine):
    seed: bytes
    deck: tuple[str, ...]
    game: g.Game
    events: list[GameEvent]
    draw_count: int
    passes: int

    # --- helpers --------------------------------------------------------------------------------

    def _apply(self, command: g.Command) -> list[GameEvent]:
        """Decide and fold one command, checking each new event survives the codec."""
        new = g.decide(self.game, command)
        assert new, f"{command!r} succeeded but recorded nothing"
        for event in new:
            assert _round_trip(event) == event
        self.game = g.fold(new, self.game)
        self.events.extend(new)
        return new

    def _try(self, command: g.Command) -> list[GameEvent] | None:
        """Apply a command that may be illegal; a refusal must change nothing."""
        before, count = self.game, len(self.events)
        try:
            return self._apply(command)
        except RuleViolation as exc:
            code = exc.code  # a stable code for the API's problem details
        assert code
        assert self.game is before
        assert len(self.events) == count
        return None

    # --- the deal -------------------------------------------------------------------------------

    @initialize(
        seed=st.binary(min_size=32, max_size=32),
        variant=st.sampled_from(sorted(VARIANTS)),
    )
    def deal(self, seed: bytes, variant: str) -> None:
        self.seed = seed
        self.deck = shuffle.derive_deck(seed)
        self.draw_count, self.passes = VARIANTS[variant]
        self.game, self.events = start(variant=variant, seed=seed)
        for event in self.events:
            assert _round_trip(event) == event
        assert self.game.status == "in_progress"
        assert self.game.deck == self.deck
        assert self.game.seed_commitment == shuffle.commitment(seed)
        lay = _layout(self.game)
        assert len(lay.stock) == 24
        assert [len(c.down) for c in lay.tableau] == [0, 1, 2, 3, 4, 5, 6]
        assert [len(c.up) for c in lay.tableau] == [1] * 7

    # --- legal play -----------------------------------------------------------------------------

    @precondition(lambda self: not self.game.is_over)
    @rule(data=st.data(), steps=st.integers(1, 4))
    def play_legal_commands(self, data: st.DataObject, steps: int) -> None:
        for _ in range(steps):
            legal = g.legal_commands(self.game)
            assert legal[-1] == g.Collect()  # collecting is always allowed while the game is open
            choices = [c for c in legal if not isinstance(c, g.Collect)]
            if not choices:
                # Only a finished game, or one whose stock is spent with nothing to play, is stuck.
                assert self.game.status == "complete" or not _layout(self.game).stock
                return
            # Lean towards drawing and scoring now and then, so games get past the first
            # pass of the stock and fill the foundations more often than uniform picks would.
            favoured = [
                c
                for c in choices
                if isinstance(c, g.Draw)
                or (isinstance(c, g.MoveCards) and c.target.startswith("foundation"))
            ]
            command: g.PlayCommand
            if favoured and data.draw(st.integers(0, 2)) == 0:
                command = data.draw(st.sampled_from(favoured))
            else:
                command = data.draw(st.sampled_from(choices))
            before = self.game
            new = self._apply(command)  # a listed command must never be refused
            if isinstance(command, g.MoveCards):
                moved = new[0]
                assert isinstance(moved, CardMoved)
                assert (moved.source, moved.target) == (command.source, command.target)
                assert len(moved.cards) == command.count
            for extra in new[1:]:
                assert isinstance(extra, AutoCompleted)
                note_event("auto-completed")
            note_event(f"played {type(new[0]).__name__}")
            assert self.game.version == before.version + len(new)
            self.check_every_invariant()

    @precondition(lambda self: not self.game.is_over and len(self.events) > 40)
    @rule(roll=st.integers(0, 5))
    def sometimes_collect(self, roll: int) -> None:
        if roll:
            return
        before = self.game
        # Without the revealed seed, or with the wrong one, a committed game never ends.
        with pytest.raises(RuleViolation) as missing:
            g.decide(before, g.Collect())
        assert missing.value.code == errors.SEED_REQUIRED
        wrong = bytes(b ^ 1 for b in self.seed).hex()
        with pytest.raises(RuleViolation) as mismatch:
            g.decide(before, g.Collect(server_seed=wrong))
        assert mismatch.value.code == errors.SEED_MISMATCH

        new = self._apply(g.Collect(server_seed=self.seed.hex()))
        note_event("collected")
        assert new == [
            Collected(
                reason="player",
                winnings=before.foundation_count * before.win_rate,
                currency="GBP",
                foundation_count=before.foundation_count,
                server_seed=self.seed.hex(),
            )
        ]
        assert self.game.status == "collected"
        assert self.game.payout == before.winnings
        assert self.game.server_seed == self.seed.hex()
        assert g.legal_commands(self.game) == []

    # --- arbitrary, often illegal, commands -----------------------------------------------------

    @rule(
        source=st.sampled_from(PILES),
        destination=st.sampled_from(PILES),
        count=st.none() | st.integers(-1, 14),
    )
    def try_a_random_move(self, source: str, destination: str, count: int | None) -> None:
        legal = g.legal_commands(self.game)
        new = self._try(g.MoveCards(source, destination, count))
        if new is None:
            return
        moved = new[0]
        assert isinstance(moved, CardMoved)
        # Whatever the rules accept is among the moves they list.
        assert g.MoveCards(moved.source, moved.target, len(moved.cards)) in legal

    @rule(
        command=st.sampled_from([g.Draw(), g.Recycle(), g.Undo()])
        | st.builds(g.Turn, st.integers(-1, 7))
    )
    def try_a_random_command(self, command: g.Command) -> None:
        legal = g.legal_commands(self.game)
        was_over = self.game.is_over
        new = self._try(command)
        # Draw, recycle, undo and turn succeed exactly when they are listed as legal.
        assert (new is not None) == (command in legal)
        if was_over:
            assert new is None

    @precondition(lambda self: self.game.status == "in_progress")
    @rule()
    def listed_moves_are_exactly_the_accepted_ones(self) -> None:
        lay = _layout(self.game)
        legal = set(g.legal_commands(self.game))
        sources = ["waste", *(f"tableau:{i}" for i in range(7))]
        sources += [f"foundation:{i}" for i in range(4)]
        targets = sources[1:]
        for source in sources:
            counts = [1]
            if source.startswith("tableau:"):
                counts = list(range(1, len(lay.tableau[int(source[8:])].up) + 1))
            for destination in targets:
                for count in counts:
                    command = g.MoveCards(source, destination, count)
                    try:
                        g.decide(self.game, command)
                        accepted = True
                    except RuleViolation:
                        accepted = False
                    assert accepted == (command in legal), command

    # --- invariants -----------------------------------------------------------------------------

    @invariant()
    def check_every_invariant(self) -> None:
        self.no_card_is_created_lost_or_duplicated()
        self.winnings_follow_the_foundations()
        self.state_is_the_fold_of_every_event()
        self.piles_stay_well_formed()
        self.player_view_hides_face_down_and_stock_cards()

    def no_card_is_created_lost_or_duplicated(self) -> None:
        lay = _layout(self.game)
        assert sorted(lay.cards()) == sorted(self.deck) == sorted(CANONICAL_DECK)

    def winnings_follow_the_foundations(self) -> None:
        lay = _layout(self.game)
        count = sum(len(f) for f in lay.foundations)
        assert self.game.foundation_count == count
        assert self.game.winnings == count * self.game.win_rate
        assert self.game.win_rate == 50  # stake 520 * 5 / 52
        if count == 52:
            assert self.game.status in ("complete", "collected")
            assert self.game.winnings == 5 * self.game.stake

    def state_is_the_fold_of_every_event(self) -> None:
        assert g.fold(self.events, g.INITIAL) == self.game
        assert self.game.version == len(self.events)

    def piles_stay_well_formed(self) -> None:
        lay = _layout(self.game)
        assert lay.draw_count == self.draw_count
        assert 1 <= lay.passes_left <= self.passes
        assert 0 <= lay.waste_fan <= min(len(lay.waste), self.draw_count)
        for pile in lay.foundations:
            for i, card in enumerate(pile):
                assert builds_on_foundation(card, pile[i - 1] if i else None), pile
        for col in lay.tableau:
            for lower, upper in zip(col.up, col.up[1:], strict=False):
                assert builds_on_tableau(upper, lower), col

    def player_view_hides_face_down_and_stock_cards(self) -> None:
        lay = _layout(self.game)
        hidden = set(lay.stock)
        for col in lay.tableau:
            hidden.update(col.down)
        view = player_view(self.game)
        text = json.dumps(view)
        assert [card for card in sorted(hidden) if f'"{card}"' in text] == []
        assert view["stock_count"] == len(lay.stock)
        assert [c["face_down"] for c in view["tableau"]] == [len(c.down) for c in lay.tableau]
        assert view["server_seed"] == (self.seed.hex() if self.game.is_over else None)


PlayMachine.TestCase.settings = settings(
    max_examples=60,
    stateful_step_count=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestRandomPlay = PlayMachine.TestCase
