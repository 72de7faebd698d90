"""La Nivernaise (seed 004; PySolFC's La Nivernaise / Tournament): two decks, eight one-card
flanks, a Line of six columns, and eight foundations by suit, four up and four down.

Deal: the first Ace of spades of the deck goes to ``flank:0`` (seed 004). The rest of the deck,
in deal order without that Ace: the next 7 cards go to ``flank:1``..``flank:7``, the next 24
fill the Line row by row, left to right (``line:c`` holds the c-th, (c+6)-th, (c+12)-th and
(c+18)-th of them, bottom first), all face up; the other 72 are the stock, face down, the next
card in deal order on top. Only each Line column's top card is available.

Foundations ``foundation:0``..``foundation:3`` build up by suit, Ace to King; ``foundation:4``..
``foundation:7`` build down by suit, King to Ace. Each suit has one of each: the first Ace
(King) of a suit to arrive starts that suit's up (down) foundation on any empty one of them, and
the suit's other Ace (King) can then only finish its down (up) foundation. Nothing comes back
off a foundation.

Moves take one card (``count`` 1, or omitted): a flank card to a foundation; a Line column's
top card to a foundation or to an empty flank. Nothing is built on the Line or on the flanks.
Each is recorded as one CardMoved; ``foundation`` as a destination means the first foundation
that fits.

The player's Deal is ``draw``: 4 cards from the stock onto each Line column, ``line:0`` first,
each column taking the next 4 (or what is left), one CardDrawn per column. An emptied Line
column is refilled at once with 4 cards from the stock (or what is left), the lowest numbered
empty column first. ``redeal``, allowed twice and only once the stock is empty, gathers the
Line columns, the last column first, each bottom to top, and lays them face down as the stock,
the first card gathered the next one drawn (a PilesGathered); the refill then deals the Line
again. The flanks stay where they are. Units are the cards on the foundations (104 is a win).
Pile ids: ``stock``, ``foundation:0``..``foundation:7``, ``flank:0``..``flank:7``,
``line:0``..``line:5``.

A move is refused, checked in this order, with: ``unknown-pile``; ``same-pile``;
``invalid-source`` (the stock or a foundation); ``invalid-destination`` (the stock, a Line
column, or a flank from a flank); ``source-empty``; ``invalid-count`` (any count but 1);
``invalid-destination`` (a flank that holds a card); then, to a foundation,
``foundation-needs-ace`` or ``foundation-needs-king`` (an empty up or down foundation),
``foundation-suit-taken`` (the suit already has that direction's foundation),
``foundation-wrong-suit``, ``foundation-wrong-rank`` (or ``no-foundation-fits`` for
``foundation``). A draw from an empty stock is ``stock-empty``; a redeal is refused with
``stock-not-empty``, ``no-passes-left`` or ``source-empty`` (nothing on the Line), in that
order; recycle, turn, remove and pick are ``action-not-allowed``.
"""

from __future__ import annotations

from collections.abc import Sequence

from events.catalog import CardDrawn, CardMoved, GameEvent, PilesGathered
from service import errors
from service.errors import RuleViolation
from service.rules import stock
from service.rules.actions import Draw, MoveCards, PlayAction, Recycle, Redeal
from service.rules.building import check_same_suit_up, same_suit_down
from service.rules.cards import ACE, KING, RANK_OF, RANKS, SUITS, Card
from service.rules.game import GameRules, Reveal
from service.rules.table import Layout, Pile, PileSpec, Slot, Table, numbered

FOUNDATIONS = 8
UP = 4  # foundation:0..3 build up; foundation:4..7 build down
FLANKS = 8
LINE = 6  # Line columns
ROWS = 4  # cards per Line column at the deal, and per column in a Deal or a refill
FIRST_FLANK_CARD = "AS"  # seed 004: the first Ace of spades of the deck starts flank:0
LINE_CARDS = LINE * ROWS  # 24
STOCK_CARDS = 104 - 1 - (FLANKS - 1) - LINE_CARDS  # 72
PASSES = 3  # the first pass through the stock and two redeals

STOCK = "stock"
ANY_FOUNDATION = "foundation"
FOUNDATION_PILES = tuple(f"foundation:{i}" for i in range(FOUNDATIONS))
FLANK_PILES = tuple(f"flank:{i}" for i in range(FLANKS))
LINE_PILES = tuple(f"line:{c}" for c in range(LINE))

LAYOUT = Layout(
    [
        PileSpec(STOCK, "stock"),
        *numbered("foundation", FOUNDATIONS),
        *numbered("flank", FLANKS),
        *(PileSpec(p, "tableau") for p in LINE_PILES),  # the Line: only its tops are available
    ]
)
S = LAYOUT.index[STOCK]
F = tuple(LAYOUT.index[p] for p in FOUNDATION_PILES)
FL = tuple(LAYOUT.index[p] for p in FLANK_PILES)
L = tuple(LAYOUT.index[p] for p in LINE_PILES)


# --- the rules the module plays by, shared with the reference bot and the tests ----------------


def builds_up(f: int) -> bool:
    """Does foundation ``f`` (0..7) build up (else down)?"""
    return f < UP


def suit_founded(table: Table, suit: str, up: bool) -> bool:
    """Has ``suit`` already started a foundation of that direction?"""
    same = F[:UP] if up else F[UP:]
    return any(table.piles[i].cards and table.piles[i].up[0][1] == suit for i in same)


def takes(table: Table, f: int) -> tuple[Card, ...]:
    """The cards foundation ``f`` (0..7) takes now: empty, the Ace (up) or King (down) of each
    suit that has no foundation of that direction yet; else the card of its suit one rank
    higher (up) or lower (down), none past the King (Ace). The foundation rule, in one place."""
    up = builds_up(f)
    top = table.piles[F[f]].top
    if top is None:
        start = RANKS[(ACE if up else KING) - 1]
        return tuple(start + suit for suit in SUITS if not suit_founded(table, suit, up))
    rank = RANK_OF[top] + (1 if up else -1)
    return (RANKS[rank - 1] + top[1],) if ACE <= rank <= KING else ()


def fits_foundation(table: Table, card: Card, f: int) -> bool:
    """May ``card`` go on foundation ``f`` (0..7) now?"""
    return card in takes(table, f)


def wanted(table: Table) -> dict[Card, int]:
    """Every card some foundation takes now, with the first foundation that takes it."""
    cards: dict[Card, int] = {}
    for f in range(FOUNDATIONS):
        for card in takes(table, f):
            cards.setdefault(card, f)
    return cards


def fitting_foundation(table: Table, card: Card) -> int | None:
    """The first foundation ``card`` goes on, or None."""
    return wanted(table).get(card)


def legal_moves(table: Table) -> list[tuple[str, str]]:
    """Every move the rules allow now (one card each), as (source, target): the flanks, then
    the Line columns, each left to right; for each, the foundations that fit, then (from the
    Line) the empty flanks, in layout order."""
    empty_flanks = [FLANK_PILES[i] for i, p in enumerate(FL) if not table.piles[p].cards]
    moves: list[tuple[str, str]] = []
    for source, index in (*zip(FLANK_PILES, FL, strict=True), *zip(LINE_PILES, L, strict=True)):
        card = table.piles[index].top
        if card is None:
            continue
        moves.extend(
            (source, FOUNDATION_PILES[f])
            for f in range(FOUNDATIONS)
            if fits_foundation(table, card, f)
        )
        if source in LINE_PILES:
            moves.extend((source, flank) for flank in empty_flanks)
    return moves


def redeals_left(table: Table) -> int:
    """Redeals still allowed: the passes through the stock left after this one."""
    return max((table.passes_left or 1) - 1, 0)


def can_redeal(table: Table) -> bool:
    """The stock is dealt out, a redeal is left, and the Line holds cards."""
    return (
        not table.piles[S].cards
        and stock.passes_remain(table)
        and any(table.piles[i].cards for i in L)
    )


def _deal_onto(slots: Sequence[Slot], line: str, reveal: Reveal) -> CardDrawn:
    """The next cards of the stock (``slots``, next card first) dealt face up onto ``line``:
    the first card lands first, so it lies lowest."""
    return CardDrawn(STOCK, line, tuple(reveal(slot) for slot in slots))


class LaNivernaise(GameRules):
    id = "la-nivernaise"
    title = "La Nivernaise"
    family = "la-nivernaise"
    #: /2: M 1.63 -> 1.22, priced against the strong player (RTP.md); play unchanged.
    rules_version = "la-nivernaise/2"
    earlier_prices = (("la-nivernaise/1", "1.63"),)
    decks = 2
    max_units = 104
    multiplier = "1.22"  # the RTP lab's, against the strong player (service/rtp/RTP.md)
    layout = LAYOUT
    actions = ("draw", "move", "redeal", "undo")
    units_are = "cards on the foundations"
    undo_rule = (
        "undo takes back only the last move, and only one that dealt no cards onto an emptied "
        "Line column (a Deal, a refill and a redeal show new cards and are never undone)"
    )
    passes = PASSES
    draw_count = LINE_CARDS  # a Deal puts 4 cards on each of the 6 Line columns
    summary = (
        "Two decks. The first Ace of spades and the next 7 cards fill the 8 flanks, one card "
        "each; the next 24 fill the Line, 6 columns of 4 face-up cards; 72 in the stock.",
        "Foundations 0-3 build up by suit from Ace to King, 4-7 down by suit from King to Ace; "
        "each suit has one of each, started by its first Ace (King); nothing comes back off a "
        "foundation.",
        "Only each Line column's top card is available: it goes to a foundation or to an empty "
        "flank; a flank card goes to a foundation; nothing is built on the Line or the flanks.",
        "Draw deals 4 stock cards onto each Line column from the left; an emptied Line column "
        "is refilled at once with 4 cards from the stock.",
        "Once the stock is empty, redeal (twice per game): the Line is gathered, the last "
        "column first, each bottom to top, and becomes the stock in that order; the flanks "
        "stay.",
        "Undo: the last move, unless it emptied a Line column that was then refilled.",
        "Pays stake x M x cards on foundations / 104 (rounded down).",
    )

    # --- deal ---------------------------------------------------------------------------------

    def deal(self, deck: Sequence[Card]) -> Table:
        first = list(deck).index(FIRST_FLANK_CARD)
        rest = (*deck[:first], *deck[first + 1 :])
        piles = [Pile()] * len(LAYOUT.specs)
        piles[FL[0]] = Pile((FIRST_FLANK_CARD,))
        for i in range(1, FLANKS):
            piles[FL[i]] = Pile((rest[i - 1],))
        line = rest[FLANKS - 1 : FLANKS - 1 + LINE_CARDS]
        for c in range(LINE):
            piles[L[c]] = Pile(tuple(line[c::LINE]))  # row by row: every 6th, bottom first
        cards = tuple(rest[FLANKS - 1 + LINE_CARDS :])[::-1]  # the next card in deal order on top
        piles[S] = Pile(cards, len(cards))
        return Table(LAYOUT, tuple(piles), self.passes, 0)

    # --- decide -------------------------------------------------------------------------------

    def decide(self, table: Table, action: PlayAction, reveal: Reveal) -> list[GameEvent]:
        if isinstance(action, Draw):
            return list(self._deal_line(table, reveal))
        if isinstance(action, MoveCards):
            source, target, card = self.resolve_move(
                table, action.source, action.target, action.count
            )
            return [CardMoved(source, target, (card,))]
        if isinstance(action, Redeal):
            return [self._redeal(table)]
        if isinstance(action, Recycle):
            raise RuleViolation(
                errors.ACTION_NOT_ALLOWED,
                f"{self.title} has no recycle; once the stock is empty, redeal the Line",
            )
        raise RuleViolation(errors.ACTION_NOT_ALLOWED, f"{self.title} has no {action.NAME} action")

    def _deal_line(self, table: Table, reveal: Reveal) -> list[CardDrawn]:
        """4 cards onto each Line column from the left, as many as the stock holds."""
        order = table.piles[S].cards[::-1]  # the next card first
        if not order:
            raise RuleViolation(
                errors.STOCK_EMPTY, f"the stock is empty; {self._after_stock(table)}"
            )
        return [
            _deal_onto(order[ROWS * c : ROWS * (c + 1)], line, reveal)
            for c, line in enumerate(LINE_PILES)
            if order[ROWS * c : ROWS * (c + 1)]
        ]

    @staticmethod
    def _after_stock(table: Table) -> str:
        """What an empty stock leaves the player: a redeal, or none."""
        if can_redeal(table):
            return f"redeal the Line ({redeals_left(table)} redeal(s) left)"
        if stock.passes_remain(table):
            return "the Line is empty, so there is nothing to redeal"
        return "both redeals have been used"

    @staticmethod
    def _redeal(table: Table) -> PilesGathered:
        """Gather the Line, the last column first, each bottom to top, as the new stock."""
        left = len(table.piles[S].cards)
        if left:
            raise RuleViolation(
                errors.STOCK_NOT_EMPTY,
                f"the stock still holds {left} cards; redeal only once it is dealt out",
            )
        if not stock.passes_remain(table):
            raise RuleViolation(
                errors.NO_PASSES_LEFT, "both redeals have been used; the Line stays as it is"
            )
        sources = LINE_PILES[::-1]
        gathered = tuple(card for line in sources for card in table.pile(line).up)
        if not gathered:
            raise RuleViolation(
                errors.SOURCE_EMPTY, "the Line is empty; there is nothing to redeal"
            )
        passes = None if table.passes_left is None else table.passes_left - 1
        return PilesGathered(sources, STOCK, gathered, passes)

    def resolve_move(
        self, table: Table, source: str, target: str, count: int | None = None
    ) -> tuple[str, str, Card]:
        """Validate a move; return its source, its concrete target and the card it moves."""
        self.pile_index(source)
        if target != ANY_FOUNDATION:
            self.pile_index(target)
        if source == target:
            raise RuleViolation(errors.SAME_PILE, f"{source} is both source and destination")
        if source == STOCK:
            raise RuleViolation(
                errors.INVALID_SOURCE, "the stock is dealt onto the Line with draw, never by card"
            )
        if source in FOUNDATION_PILES:
            raise RuleViolation(
                errors.INVALID_SOURCE, f"cards never come back off a foundation ({source})"
            )
        _check_destination(source, target)
        card = table.pile(source).top
        if card is None:  # every card outside the stock lies face up
            raise RuleViolation(errors.SOURCE_EMPTY, f"{source} is empty")
        if count not in (None, 1):
            raise RuleViolation(
                errors.INVALID_COUNT, f"only the top card of {source} moves; count must be 1"
            )
        if target in FLANK_PILES:
            held = table.pile(target).top
            if held is not None:
                raise RuleViolation(
                    errors.INVALID_DESTINATION,
                    f"{target} already holds {held}; a flank holds one card",
                )
            return source, target, card
        if target == ANY_FOUNDATION:
            found = fitting_foundation(table, card)
            if found is None:
                raise RuleViolation(
                    errors.NO_FOUNDATION_FITS, f"{card} does not fit on any foundation yet"
                )
            return source, FOUNDATION_PILES[found], card
        check_foundation(table, card, FOUNDATION_PILES.index(target))
        return source, target, card

    # --- what the player can do ---------------------------------------------------------------

    def legal_actions(self, table: Table) -> list[PlayAction]:
        actions: list[PlayAction] = [Draw()] if table.piles[S].cards else []
        actions.extend(MoveCards(s, t, 1) for s, t in legal_moves(table))
        if can_redeal(table):
            actions.append(Redeal())
        return actions

    # --- undo, automatic play, units ----------------------------------------------------------

    def undoable(self, event: GameEvent, before: Table) -> bool:
        """A move; one that emptied a Line column is followed by its refill (a CardDrawn),
        which the engine never lets be undone. Deals and redeals show new cards."""
        return isinstance(event, CardMoved)

    def automatic(self, table: Table, reveal: Reveal) -> list[GameEvent]:
        """An emptied Line column is refilled from the stock, the lowest numbered first."""
        order = table.piles[S].cards[::-1]
        if not order:
            return []
        for line, index in zip(LINE_PILES, L, strict=True):
            if not table.piles[index].cards:
                return [_deal_onto(order[:ROWS], line, reveal)]
        return []

    def units(self, table: Table) -> int:
        return sum(len(table.piles[f].cards) for f in F)


def _check_destination(source: str, target: str) -> None:
    """Refuse a destination no card from ``source`` may ever go to."""
    if target == STOCK:
        raise RuleViolation(errors.INVALID_DESTINATION, "cards never go back to the stock")
    if target in LINE_PILES:
        raise RuleViolation(
            errors.INVALID_DESTINATION,
            f"nothing is built on the Line ({target}); play to a foundation or an empty flank",
        )
    if source in FLANK_PILES and target in FLANK_PILES:
        raise RuleViolation(
            errors.INVALID_DESTINATION, f"a flank card goes only to a foundation, not {target}"
        )


def check_foundation(table: Table, card: Card, f: int) -> None:
    """Refuse ``card`` on foundation ``f`` (0..7), saying why."""
    where = FOUNDATION_PILES[f]
    up = builds_up(f)
    top = table.piles[F[f]].top
    if top is None:
        start = "an Ace" if up else "a King"
        if RANK_OF[card] != (ACE if up else KING):
            code = errors.FOUNDATION_NEEDS_ACE if up else errors.FOUNDATION_NEEDS_KING
            raise RuleViolation(code, f"{card} cannot start {where}: only {start} can")
        if suit_founded(table, card[1], up):
            direction = "up" if up else "down"
            raise RuleViolation(
                errors.FOUNDATION_SUIT_TAKEN,
                f"{card} cannot start {where}: its suit already builds {direction} on another "
                "foundation, and each suit has one up and one down",
            )
        return
    if up:
        check_same_suit_up(card, top, where)
        return
    if top[1] != card[1]:
        raise RuleViolation(
            errors.FOUNDATION_WRONG_SUIT,
            f"{card} cannot go on {top} in {where}: a foundation takes one suit only",
        )
    if not same_suit_down(card, top):
        raise RuleViolation(
            errors.FOUNDATION_WRONG_RANK,
            f"{card} cannot go on {top} in {where}: foundations 4-7 build down one rank at a time",
        )


LA_NIVERNAISE = LaNivernaise()

#: What this module offers, and where its family stands in the catalogue (service.games).
OFFERED = (LA_NIVERNAISE,)
SHELF = 90
