"""Three Shuffles and a Draw (seed 004): sixteen fans of three, two seeded redeals, one Draw.

Deal: the four Aces start the foundations (``foundation:0``..``foundation:3`` for spades,
hearts, diamonds, clubs), taken out of the deck; the other 48 cards, in deal order, fill 16 fans
of 3 row by row, left to right (fan c takes the c-th, (c+16)-th and (c+32)-th), all face up.
Only a fan's top card is available. Nothing is sealed: the deal shows every card.

Move one card at a time, from a fan's top: to its suit's foundation (one rank higher), or onto
another fan's top card of the same suit, one rank higher. Empty fans stay empty, and nothing
comes back off a foundation.

Redeal, twice per game, at the player's choice: the fans are gathered in order (fan 0 bottom to
top, then fan 1, ...), shuffled with the published redeal shuffle keyed by the game's seed and
the label ``redeal-1`` then ``redeal-2`` (service/core/SHUFFLE.md), and dealt again fan by fan,
three to a fan from fan 0, the last fan taking what is left. The shuffle needs the seed, which stays
secret until the game ends; the audit then re-derives every redeal. ``passes_left`` counts the deals
still allowed, the current one included (3 at the deal).

The Draw (action ``pick``), once per game at any time: any buried card of a fan (not its top)
is played to its foundation or onto a fan's top card (its own fan's included) by the same rules.

Units are the cards played to the foundations (48; the Aces do not count); a full win has all
52 on them. Undo takes back the last move, never a redeal or the Draw.

A move is refused, checked in this order, with: ``unknown-pile``; ``same-pile``;
``invalid-source`` (a foundation); ``invalid-destination`` (nowhere else); ``source-empty``;
``invalid-count`` (more than one card); then to a foundation ``foundation-wrong-suit`` /
``foundation-wrong-rank`` (``no-foundation-fits`` for ``foundation``); onto a fan
``empty-fan`` (an empty fan stays empty), ``not-one-rank-lower``, ``not-same-suit``. The Draw
also refuses ``no-picks-left``, ``card-not-in-pile`` and ``not-buried`` (a top card is moved,
not drawn).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from events.catalog import CardMoved, CardPicked, DealtPile, GameEvent, Reshuffled
from service import errors
from service.errors import RuleViolation
from service.rules.actions import MoveCards, Pick, PlayAction, Redeal
from service.rules.building import check_same_suit_down, check_same_suit_up, same_suit_down
from service.rules.cards import ACE, RANK_OF, SUITS, Card
from service.rules.game import GameRules, Reveal, shuffled
from service.rules.table import Layout, Pile, PileSpec, Table, numbered

FANS = 16
FAN_SIZE = 3
DEALS = 3  # the deal and two redeals

FOUNDATION_PILES = tuple(p.id for p in numbered("foundation", len(SUITS)))
FAN_PILES = tuple(f"fan:{i}" for i in range(FANS))
ANY_FOUNDATION = "foundation"
#: The fans are the game's tableau (kind "tableau"), named as the rules name them.
LAYOUT = Layout([*numbered("foundation", len(SUITS)), *(PileSpec(p, "tableau") for p in FAN_PILES)])
F = tuple(LAYOUT.index[p] for p in FOUNDATION_PILES)
T = tuple(LAYOUT.index[p] for p in FAN_PILES)
#: A suit's foundation: the Aces start them in the canonical suit order.
FOUNDATION_OF = {s: i for i, s in enumerate(SUITS)}


def foundation_of(card: Card) -> str:
    return FOUNDATION_PILES[FOUNDATION_OF[card[1]]]


def fits_fan(card: Card, fan: Pile) -> bool:
    """May ``card`` go onto this fan? Onto its top card, same suit, one rank higher; never onto
    an empty fan."""
    top = fan.top
    return top is not None and same_suit_down(card, top)


def fits_foundation(table: Table, card: Card) -> bool:
    top = table.pile(foundation_of(card)).top
    return top is not None and RANK_OF[card] == RANK_OF[top] + 1


#: A card, or a search model's number for one (the RTP lab deals its model's fans here too).
_C = TypeVar("_C")


def deal_fans(cards: Sequence[_C]) -> list[tuple[_C, ...]]:
    """A redeal: fans of three, fan by fan from fan 0, the last taking what is left."""
    return [tuple(cards[i : i + FAN_SIZE]) for i in range(0, len(cards), FAN_SIZE)]


class ThreeShuffles(GameRules):
    id = "three-shuffles"
    title = "Three Shuffles and a Draw"
    family = "three-shuffles"
    #: /2: M 1.59 -> 1.28, priced against the strong player (RTP.md); play unchanged.
    rules_version = "three-shuffles/2"
    earlier_prices = (("three-shuffles/1", "1.59"),)
    decks = 1
    max_units = 48
    multiplier = "1.28"  # the RTP lab's, against the strong player (service/rtp/RTP.md)
    layout = LAYOUT
    actions = ("move", "redeal", "pick", "undo")
    units_are = "cards played to the foundations (the four Aces start there and do not count)"
    undo_rule = "undo takes back only the last move; never a redeal or the Draw of a buried card"
    passes = DEALS
    picks = 1
    summary = (
        "One deck. The four Aces start the foundations; the other 48 cards are dealt into 16 "
        "fans of 3, row by row, all face up. Only a fan's top card is available.",
        "Move one card at a time: to its foundation (up by suit), or onto another fan's top "
        "card of the same suit, one rank higher. Empty fans stay empty.",
        "Redeal twice per game: the fans are gathered in order (fan 0 bottom to top, then fan "
        "1, ...), shuffled with the game's seed and the label redeal-1 or redeal-2, and dealt "
        "again in fans of 3 from fan 0, the last fan taking what is left; the audit re-derives "
        "every redeal from the revealed seed.",
        "The Draw (pick), once per game: any buried card of a fan is played to its foundation "
        "or onto a fan's top card.",
        "Undo: the last move, never a redeal or the Draw.",
        "Pays stake x M x cards played to the foundations / 48 (rounded down).",
    )

    # --- deal ---------------------------------------------------------------------------------

    def deal(self, deck: Sequence[Card]) -> Table:
        piles = [Pile()] * len(LAYOUT.specs)
        for suit, f in zip(SUITS, F, strict=True):
            piles[f] = Pile(("A" + suit,))
        rest = [c for c in deck if RANK_OF[c] != ACE]
        for c, t in enumerate(T):
            piles[t] = Pile(tuple(rest[c::FANS]))  # row by row: every 16th card
        return Table(LAYOUT, tuple(piles), self.passes, 0, self.picks)

    # --- decide -------------------------------------------------------------------------------

    def decide(self, table: Table, action: PlayAction, reveal: Reveal) -> list[GameEvent]:
        if isinstance(action, MoveCards):
            source, target, card = self.resolve_move(table, action)
            return [CardMoved(source, target, (card,))]
        if isinstance(action, Pick):
            return [self._pick(table, action)]
        if isinstance(action, Redeal):
            return [self._redeal(table, reveal)]
        raise RuleViolation(errors.ACTION_NOT_ALLOWED, f"{self.title} has no {action.NAME} action")

    def resolve_move(self, table: Table, move: MoveCards) -> tuple[str, str, Card]:
        """Validate a move; return its source, concrete target and card."""
        self._check_piles(move.source, move.target)
        pile = table.pile(move.source)
        if not pile.cards:
            raise RuleViolation(errors.SOURCE_EMPTY, f"{move.source} is empty")
        if move.count not in (None, 1):
            raise RuleViolation(errors.INVALID_COUNT, "cards move one at a time, from a fan's top")
        card = pile.cards[-1]
        assert isinstance(card, str)  # every card on the table lies face up
        return move.source, self._landing(table, card, move.target), card

    def _pick(self, table: Table, pick: Pick) -> CardPicked:
        self._check_piles(pick.source, pick.target, same_pile_allowed=True)
        if not table.picks_left:
            raise RuleViolation(
                errors.NO_PICKS_LEFT, "the Draw of a buried card is allowed once per game"
            )
        cards = table.pile(pick.source).cards
        if pick.card not in cards:
            raise RuleViolation(errors.CARD_NOT_IN_PILE, f"{pick.source} holds no {pick.card}")
        index = cards.index(pick.card)
        if index == len(cards) - 1:
            raise RuleViolation(
                errors.NOT_BURIED,
                f"{pick.card} is the top card of {pick.source}: move it; the Draw is for a "
                "buried card",
            )
        target = self._landing(table, pick.card, pick.target)
        return CardPicked(pick.source, index, pick.card, target, table.picks_left - 1)

    def _redeal(self, table: Table, reveal: Reveal) -> Reshuffled:
        passes_left = table.passes_left or 0
        if passes_left <= 1:
            raise RuleViolation(errors.NO_PASSES_LEFT, "both redeals have been used")
        gathered = [c for t in T for c in table.piles[t].up]
        if not gathered:
            raise RuleViolation(
                errors.SOURCE_EMPTY, "the fans are empty; there is nothing to redeal"
            )
        label = f"redeal-{DEALS - passes_left + 1}"
        fans = deal_fans(shuffled(reveal, label, gathered))
        piles = tuple(DealtPile(FAN_PILES[i], 0, cards) for i, cards in enumerate(fans))
        return Reshuffled(label, FAN_PILES, piles, passes_left - 1)

    def _check_piles(self, source: str, target: str, same_pile_allowed: bool = False) -> None:
        self.pile_index(source)
        if target != ANY_FOUNDATION:
            self.pile_index(target)
        if source == target and not same_pile_allowed:
            raise RuleViolation(errors.SAME_PILE, f"{source} is both source and destination")
        if source not in FAN_PILES:
            raise RuleViolation(
                errors.INVALID_SOURCE, f"cards never come back off a foundation ({source})"
            )

    @staticmethod
    def _landing(table: Table, card: Card, target: str) -> str:
        """Where ``card`` lands for ``target``, or the refusal saying why it cannot."""
        if target == ANY_FOUNDATION:
            if not fits_foundation(table, card):
                raise RuleViolation(
                    errors.NO_FOUNDATION_FITS, f"{card} does not fit on its foundation yet"
                )
            return foundation_of(card)
        if target in FOUNDATION_PILES:
            check_same_suit_up(card, table.pile(target).top, target)
            return target
        onto = table.pile(target).top
        if onto is None:
            raise RuleViolation(errors.EMPTY_FAN, f"{target} is empty, and empty fans stay empty")
        check_same_suit_down(card, onto, target)
        return target

    # --- what the player can do ---------------------------------------------------------------

    def legal_actions(self, table: Table) -> list[PlayAction]:
        actions: list[PlayAction] = [MoveCards(s, t, 1) for s, t in legal_moves(table)]
        if table.picks_left:
            actions.extend(Pick(s, c, t) for s, c, t in legal_picks(table))
        if (table.passes_left or 0) > 1 and any(table.piles[t].cards for t in T):
            actions.append(Redeal())
        return actions

    # --- undo, units --------------------------------------------------------------------------

    def undoable(self, event: GameEvent, before: Table) -> bool:
        return isinstance(event, CardMoved)

    def units(self, table: Table) -> int:
        return sum(max(len(table.piles[f].cards) - 1, 0) for f in F)


# --- shared by the rules, the views and the reference bot -------------------------------------


def _targets(table: Table, card: Card) -> list[str]:
    """Where ``card`` may land: its foundation first, then the fans in order."""
    found = [foundation_of(card)] if fits_foundation(table, card) else []
    return found + [p for p, t in zip(FAN_PILES, T, strict=True) if fits_fan(card, table.piles[t])]


def legal_moves(table: Table) -> list[tuple[str, str]]:
    """Every legal move as (source fan, target), sources in fan order."""
    moves: list[tuple[str, str]] = []
    for source, t in zip(FAN_PILES, T, strict=True):
        top = table.piles[t].top
        if top is not None:
            moves.extend((source, target) for target in _targets(table, top) if target != source)
    return moves


def legal_picks(table: Table) -> list[tuple[str, Card, str]]:
    """Every legal Draw as (source fan, buried card, target), bottom cards first."""
    picks: list[tuple[str, Card, str]] = []
    for source, t in zip(FAN_PILES, T, strict=True):
        for card in table.piles[t].up[:-1]:
            picks.extend((source, card, target) for target in _targets(table, card))
    return picks


THREE_SHUFFLES = ThreeShuffles()

#: What this module offers, and where its family stands in the catalogue (service.games).
OFFERED = (THREE_SHUFFLES,)
SHELF = 70
