"""The double-entry wallet ledger, pure part: accounts, and what each money movement posts.

Every movement is one transaction of signed postings that sum to zero (credit > 0 > debit):

    deposit     cashier -a          player +a
    withdrawal  player -a           cashier +a
    stake       player -stake       house-stakes +stake
    winnings    house-payouts -w    player +w
    refund      house-stakes -stake player +stake    (a voided game's stake back)
    duel-fee    player -fee         duel-pot +fee     (a seat taken)
    duel-prize  duel-pot -pot       winner(s) +prize, house-rake +rake
    duel-refund duel-pot -pot       each seat's player +fee   (a duel cancelled)

In seamless mode (issue 37) the players' money is the operator's, and the ledger mirrors what
the operator's wallet confirmed, against the player's ``operator-wallet`` account (which may go
below zero: it is what the player has brought in from the operator's wallet, net):

    wallet-bet       operator-wallet -stake  player +stake   (a bet confirmed: then the stake)
    wallet-win       player -w               operator-wallet +w   (a win confirmed)
    wallet-rollback  player -stake           operator-wallet +stake   (a confirmed bet's
                                                                      rollback, on a void)

Each names the event that caused it and carries a client transaction id that is applied exactly
once. The SQL lives in service.storage.ledger. The database keeps a deliberate second copy of
this mapping (migrations/0028 ledger_entry_of: the guard does not trust the guarded) and posts
nothing else; tests/integration/test_ledger_meaning.py holds the two equal for every event type.

Certification games (an operator's known seed or deck) move no real money: they play for the
sandbox currency, ISO 4217's testing code XTS (``game_currency`` is the one rule). An event in
XTS posts exactly the movements above, but between XTS accounts only: the player's sandbox
wallet (``sandbox:<player id>``) and the XTS house accounts. Every transaction is in one
currency, so the real and the sandbox books each sum to zero on their own. A sandbox wallet is
never funded and has no floor: its balance is the net of the player's certification play.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from typing import Literal

from events.catalog import (
    AnyEvent,
    BalanceCorrected,
    Collected,
    DuelCancelled,
    DuelEvent,
    DuelSettled,
    FundsDeposited,
    FundsWithdrawn,
    SeatTaken,
    StakePlaced,
    Voided,
    WalletCallAnswered,
    WalletReviewResolved,
)

TransactionKind = Literal[
    "deposit",
    "withdrawal",
    "stake",
    "winnings",
    "refund",
    "duel-fee",
    "duel-prize",
    "duel-refund",
    "correction",
    "wallet-bet",
    "wallet-win",
    "wallet-rollback",
]
AccountKind = Literal[
    "player",
    "house-stakes",
    "house-payouts",
    "cashier",
    "duel-pot",
    "house-rake",
    "sandbox",
    "operator-wallet",
]

#: ISO 4217's code for testing: the money certification games play for. No player's wallet is
#: ever in it (registration refuses it), so no certification game can reach a real balance.
SANDBOX = "XTS"


class InsufficientFunds(Exception):
    def __init__(self, account_id: str, amount: int) -> None:
        super().__init__(f"{account_id} cannot cover {amount}")
        self.account_id = account_id
        self.amount = amount


class TransactionIdReused(Exception):
    """The same client transaction id came back asking for something else."""

    def __init__(self, client_transaction_id: str) -> None:
        super().__init__(
            f"transaction id {client_transaction_id!r} was already used for a different request"
        )
        self.client_transaction_id = client_transaction_id


@dataclass(frozen=True, slots=True)
class Account:
    account_id: str
    kind: AccountKind
    currency: str
    player_id: str | None = None


def game_currency(currency: str, certification: bool) -> str:
    """The money a game or a duel is played for: the player's own ``currency``, or for a
    certification deal the sandbox. The one place that decides it; the deal records it, and
    every posting the game causes follows from what was recorded."""
    return SANDBOX if certification else currency


def is_sandbox(currency: str) -> bool:
    return currency == SANDBOX


def player_account(player_id: str, currency: str) -> Account:
    """The player's wallet in ``currency``: their real one, or in the sandbox currency their
    sandbox wallet (which may go below zero)."""
    if is_sandbox(currency):
        return Account(f"sandbox:{player_id}", "sandbox", SANDBOX, player_id)
    return Account(f"player:{player_id}", "player", currency, player_id)


def opened_on_use(account: Account) -> bool:
    """Sandbox and operator-wallet accounts are opened by their first posting: no registration
    opens them."""
    return is_sandbox(account.currency) or account.kind == "operator-wallet"


def operator_wallet(player_id: str, currency: str) -> Account:
    """The server's mirror of the player's money at the operator (seamless mode): what the
    operator's wallet confirmed in and out, net; below zero while a stake is in play."""
    return Account(f"operator-wallet:{player_id}", "operator-wallet", currency)


def house_stakes(currency: str) -> Account:
    return Account(f"house-stakes:{currency}", "house-stakes", currency)


def house_payouts(currency: str) -> Account:
    return Account(f"house-payouts:{currency}", "house-payouts", currency)


def cashier(currency: str) -> Account:
    return Account(f"cashier:{currency}", "cashier", currency)


def duel_pot(duel_id: str, currency: str) -> Account:
    """A duel's own pot: the fees paid in, emptied by its settlement or cancellation."""
    return Account(f"duel-pot:{duel_id}", "duel-pot", currency)


def house_rake(currency: str) -> Account:
    return Account(f"house-rake:{currency}", "house-rake", currency)


def account_named(account_id: str, currency: str) -> Account | None:
    """The account an id names, built as the functions above build it: its kind (and a wallet's
    player) follow from its id, a house account's currency too; ``currency`` is the one a
    player's wallet or a duel's pot is in, which their ids do not say. None for an id of no
    kind. (migrations/0028 accounts_kind_follows_id is the database's copy of this rule.)"""
    prefix, _, rest = account_id.partition(":")
    if prefix in ("player", "sandbox", "duel-pot", "operator-wallet"):
        try:
            if str(uuid.UUID(rest)) != rest:
                return None
        except ValueError:
            return None
        if prefix == "duel-pot":
            return duel_pot(rest, currency)
        if prefix == "operator-wallet":
            return operator_wallet(rest, currency)
        return player_account(rest, SANDBOX if prefix == "sandbox" else currency)
    house = {
        "house-stakes": house_stakes,
        "house-payouts": house_payouts,
        "cashier": cashier,
        "house-rake": house_rake,
    }.get(prefix)
    return house(rest) if house is not None else None


#: The kinds of stream (service.core.streams.kind_of) whose events move money: the ones
#: entry_for and duel_entry_for map to transactions.
MONEY_STREAMS = ("game", "duel", "player", "wallet")


def house_accounts(currency: str) -> tuple[Account, ...]:
    return (house_stakes(currency), house_payouts(currency), cashier(currency))


@dataclass(frozen=True, slots=True)
class Entry:
    """One ledger transaction to post."""

    client_transaction_id: str
    kind: TransactionKind
    currency: str
    amount: int
    postings: tuple[tuple[Account, int], ...]  # (account, signed amount), summing to zero
    cause_stream: str
    cause_version: int

    @property
    def fingerprint(self) -> str:
        """What was asked, independent of when: a reused id must ask for exactly this."""
        parts = [self.kind, self.currency, str(self.amount)]
        parts += [f"{account.account_id}={amount}" for account, amount in self.postings]
        return hashlib.sha256("|".join(parts).encode()).hexdigest()


def _entry(
    tx_id: str,
    kind: TransactionKind,
    currency: str,
    amount: int,
    debit: Account,
    credit: Account,
    cause: tuple[str, int],
) -> Entry:
    if amount <= 0:
        raise ValueError(f"a {kind} moves a positive amount, not {amount}")
    return Entry(tx_id, kind, currency, amount, ((debit, -amount), (credit, amount)), *cause)


def deposit(
    player_id: str, currency: str, amount: int, tx_id: str, cause: tuple[str, int]
) -> Entry:
    player = player_account(player_id, currency)
    return _entry(f"cashier:{tx_id}", "deposit", currency, amount, cashier(currency), player, cause)


def withdrawal(
    player_id: str, currency: str, amount: int, tx_id: str, cause: tuple[str, int]
) -> Entry:
    player = player_account(player_id, currency)
    return _entry(
        f"cashier:{tx_id}", "withdrawal", currency, amount, player, cashier(currency), cause
    )


def stake(
    player_id: str, currency: str, amount: int, game_id: str, cause: tuple[str, int]
) -> Entry:
    player = player_account(player_id, currency)
    return _entry(
        f"stake:{game_id}", "stake", currency, amount, player, house_stakes(currency), cause
    )


def winnings(
    player_id: str, currency: str, amount: int, game_id: str, cause: tuple[str, int]
) -> Entry:
    player = player_account(player_id, currency)
    return _entry(
        f"winnings:{game_id}", "winnings", currency, amount, house_payouts(currency), player, cause
    )


def refund(
    player_id: str, currency: str, amount: int, game_id: str, cause: tuple[str, int]
) -> Entry:
    player = player_account(player_id, currency)
    return _entry(
        f"refund:{game_id}", "refund", currency, amount, house_stakes(currency), player, cause
    )


#: The house accounts an operator's correction may move money with, by name.
CORRECTION_ACCOUNTS = {
    "house-payouts": house_payouts,
    "house-stakes": house_stakes,
    "cashier": cashier,
}


def correction(player_id: str, event: BalanceCorrected, cause: tuple[str, int]) -> Entry | None:
    """An operator's correction (BalanceCorrected): its amount out of the player's wallet to the
    house account it names (``debit``), or from it into the wallet (``credit``); none for 0."""
    if event.amount == 0:
        return None
    wallet = player_account(player_id, event.currency)
    house = CORRECTION_ACCOUNTS[event.account](event.currency)
    debit, credit = (wallet, house) if event.direction == "debit" else (house, wallet)
    return _entry(
        f"correction:{event.correction_id}",
        "correction",
        event.currency,
        event.amount,
        debit,
        credit,
        cause,
    )


@dataclass(frozen=True, slots=True)
class Movement:
    """What money one recorded event moves: the kind of transaction, its amount and currency
    (the accounts follow from the kind)."""

    kind: TransactionKind
    amount: int
    currency: str


def game_movement(event: AnyEvent) -> Movement | None:
    """The money a game's recorded event moves, if any: the one rule for it, which posting
    live, rebuilding and checking the ledger, reconciling and the daily totals all read."""
    if isinstance(event, StakePlaced):
        if event.duel_id is not None:
            return None  # a duel seat's fee is the duel's, paid when the seat was taken
        return Movement("stake", event.stake, event.currency)
    if isinstance(event, Collected) and event.winnings > 0:
        return Movement("winnings", event.winnings, event.currency)
    if isinstance(event, Voided) and event.refund > 0:
        return Movement("refund", event.refund, event.currency)
    return None


def duel_movement(event: DuelEvent, currency: str) -> Movement | None:
    """The money a duel's recorded event moves, if any: a fee into the pot, the whole pot out
    (to the winners and the rake), or the pot back to every seat. The one rule, as for games."""
    if isinstance(event, SeatTaken):
        return Movement("duel-fee", event.fee, currency)
    if isinstance(event, DuelSettled):
        return Movement("duel-prize", event.pot, currency)
    if isinstance(event, DuelCancelled) and event.refunds:
        return Movement("duel-refund", sum(r.amount for r in event.refunds), currency)
    return None


_GAME_ENTRY = {"stake": stake, "winnings": winnings, "refund": refund}


def entry_for(
    event: AnyEvent, stream_id: str, version: int, player_id: str, game_id: str | None
) -> Entry | None:
    """The ledger transaction a recorded event causes, if any: a cashier's event, or a game's
    movement (:func:`game_movement`) between the player's and the house's accounts. Used when
    posting live and when checking or rebuilding from the log."""
    cause = (stream_id, version)
    if isinstance(event, FundsDeposited):
        return deposit(player_id, event.currency, event.amount, event.transaction_id, cause)
    if isinstance(event, FundsWithdrawn):
        return withdrawal(player_id, event.currency, event.amount, event.transaction_id, cause)
    if isinstance(event, BalanceCorrected):
        return correction(player_id, event, cause)
    money = game_movement(event) if game_id is not None else None
    if money is None or game_id is None:
        return None
    return _GAME_ENTRY[money.kind](player_id, money.currency, money.amount, game_id, cause)


def duel_entry_for(
    event: DuelEvent, duel_id: str, currency: str, stream_id: str, version: int
) -> Entry | None:
    """The ledger transaction a duel's recorded event causes, if any: its movement
    (:func:`duel_movement`) between the duel's pot and the players (and the rake). Live and
    when checking."""
    money = duel_movement(event, currency)
    if money is None:
        return None
    pot = duel_pot(duel_id, currency)
    cause = (stream_id, version)
    tx_id = f"{money.kind}:{duel_id}"
    if isinstance(event, SeatTaken):
        player = player_account(event.player_id, currency)
        return _entry(
            f"{tx_id}:{event.seat}", money.kind, currency, money.amount, player, pot, cause
        )
    if isinstance(event, DuelSettled):
        legs = [(player_account(p.player_id, currency), p.amount) for p in event.payouts]
        if event.rake:
            legs.append((house_rake(currency), event.rake))
    else:
        assert isinstance(event, DuelCancelled)
        legs = [(player_account(r.player_id, currency), r.amount) for r in event.refunds]
    return Entry(tx_id, money.kind, currency, money.amount, ((pot, -money.amount), *legs), *cause)


def wallet_applied(event: object) -> bool:
    """Whether a round's wallet event says its movement was applied at the operator: a
    confirmed answer, or an operator's resolution that it was (seamless mode)."""
    if isinstance(event, WalletCallAnswered):
        return event.outcome == "confirmed"
    return isinstance(event, WalletReviewResolved) and event.action == "settled"


def wallet_entry_for(
    answer: WalletCallAnswered | WalletReviewResolved,
    player_id: str,
    currency: str,
    bet_confirmed_before: bool,
    cause: tuple[str, int],
) -> Entry | None:
    """The mirror posting of an answer (or an operator's resolution) on a round's wallet stream
    (seamless mode): an applied bet brings its amount in from the operator's wallet, an applied
    win takes it back out, an applied rollback returns a bet the wallet had applied
    (``bet_confirmed_before``; one it never applied was never brought in). None for anything
    else, or 0. (migrations/0044 ledger_entry_of is the database's copy.)"""
    if not wallet_applied(answer) or answer.amount <= 0 or answer.currency != currency:
        return None
    wallet = player_account(player_id, currency)
    operator = operator_wallet(player_id, currency)
    tx_id = f"wallet:{answer.transaction_uuid}"
    if answer.method == "bet":
        return _entry(tx_id, "wallet-bet", currency, answer.amount, operator, wallet, cause)
    if answer.method == "win":
        return _entry(tx_id, "wallet-win", currency, answer.amount, wallet, operator, cause)
    if answer.method == "rollback" and bet_confirmed_before:
        return _entry(tx_id, "wallet-rollback", currency, answer.amount, wallet, operator, cause)
    return None
