"""The verifiable shuffle: the published algorithm, its worked example, and its fairness."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from statistics import NormalDist

import pytest

from service.core import shuffle
from service.games.klondike import VEGAS_DRAW1
from service.games.three_shuffles import FAN_PILES, THREE_SHUFFLES
from service.rules.cards import ALL_CARDS, CANONICAL_DECK, Card, is_deck

SPEC = Path(shuffle.__file__).with_name("SHUFFLE.md").read_text()
EXAMPLE_SEED = bytes(range(32))
EXAMPLE_DECK = (
    "2C 6S 9H 5H 7S 5D 3C JC 2D JH 7D 3D 5S KC 4S TD AD 6D AC QD 9D 8D TH 8C 4C 3S "
    "AS JD 3H 4H KD AH 8S 5C JS 6H 9S 8H 4D QC KS 2H 7H TS TC 6C KH 9C 2S 7C QS QH"
).split()
LUCKY_DECK = (
    "9C QH 7C 4S 7H 5D QS 3H 2D 4H 2S JD JC 5S 5C 2H 6D JH QC 8C 9S TC 3D 7S 8H AH "
    "KD 6S QD 2C 4D KH AD 5H 8D 4C 9H 3S KS TS 9D TD 7D AS JS TH AC 6H 6C 3C KC 8S"
).split()


def _spec_decks() -> list[list[str]]:
    """The decks printed in SHUFFLE.md's code blocks (two lines of 26 cards each)."""
    blocks = re.findall(r"```\n((?:[2-9TJQKA][SHDC] ?)+\n(?:[2-9TJQKA][SHDC] ?)+)\n```", SPEC)
    return [block.split() for block in blocks]


def test_worked_example_deals_the_documented_deck() -> None:
    assert list(shuffle.derive_deck(EXAMPLE_SEED)) == EXAMPLE_DECK
    assert list(shuffle.derive_deck(EXAMPLE_SEED, "lucky")) == LUCKY_DECK


def test_spec_prints_exactly_the_decks_the_code_derives() -> None:
    assert _spec_decks() == [EXAMPLE_DECK, LUCKY_DECK]


def test_spec_commitment_and_first_block_match_the_code() -> None:
    commitment = shuffle.commitment(EXAMPLE_SEED)
    assert commitment == hashlib.sha256(EXAMPLE_SEED).hexdigest()
    assert f"`{commitment}`" in SPEC
    message = b"vegas-solitaire/shuffle/1\x00\x00" + (0).to_bytes(8, "big")
    assert f"`{message.hex()}`" in SPEC
    assert f"`{hmac.new(EXAMPLE_SEED, message, hashlib.sha256).hexdigest()}`" in SPEC


def test_spec_layout_table_matches_the_deal() -> None:
    table = VEGAS_DRAW1.deal(EXAMPLE_DECK)
    for i in range(7):
        column = table.pile(f"tableau:{i}")
        assert len(column.up) == 1
        down = " ".join(str(c) for c in column.face_down)
        row = rf"\| {i} \| {f'`{down}`' if down else ''} ?\| `{column.up[0]}` \|"
        assert re.search(row, SPEC), row
    next_first = table.pile("stock").cards[::-1]
    assert "begins `" + " ".join(str(c) for c in next_first[:3]) + "`" in SPEC


def test_independent_reimplementation_from_the_spec_agrees() -> None:
    """Written from SHUFFLE.md's text alone, without calling the module's helpers."""

    def words() -> Iterator[int]:
        k = 0
        while True:
            msg = b"vegas-solitaire/shuffle/1" + b"\x00" + b"lucky" + b"\x00" + k.to_bytes(8, "big")
            block = hmac.new(EXAMPLE_SEED, msg, hashlib.sha256).digest()
            for i in range(0, 32, 4):
                yield int.from_bytes(block[i : i + 4], "big")
            k += 1

    stream = words()
    deck = [r + s for s in "SHDC" for r in "A23456789TJQK"]
    for i in range(51, 0, -1):
        n = i + 1
        limit = 2**32 - (2**32 % n)
        w = next(stream)
        while w >= limit:
            w = next(stream)
        j = w % n
        deck[i], deck[j] = deck[j], deck[i]
    assert deck == LUCKY_DECK


def test_canonical_deck_order() -> None:
    assert CANONICAL_DECK[0] == "AS"
    assert CANONICAL_DECK[12] == "KS"
    assert CANONICAL_DECK[13] == "AH"
    assert CANONICAL_DECK[51] == "KC"


def test_rejection_sampling_discards_words_at_or_above_the_limit() -> None:
    n = 52
    limit = 2**32 - 2**32 % n
    assert shuffle.uniform_below(iter([limit, 2**32 - 1, 105]), n) == 105 % n
    assert shuffle.uniform_below(iter([limit - 1]), n) == (limit - 1) % n


def test_client_seed_changes_the_deck_and_none_equals_empty_stream() -> None:
    assert shuffle.derive_deck(EXAMPLE_SEED, "a") != shuffle.derive_deck(EXAMPLE_SEED)
    assert shuffle.derive_deck(EXAMPLE_SEED, None) == tuple(EXAMPLE_DECK)


@pytest.mark.parametrize("bad", ["", "x" * 65, "caf\u00e9", "tab\there"])
def test_client_seed_must_be_1_to_64_printable_ascii(bad: str) -> None:
    with pytest.raises(ValueError, match="printable ASCII"):
        shuffle.derive_deck(EXAMPLE_SEED, bad)


def test_server_seed_must_be_32_bytes() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        shuffle.derive_deck(b"short")


def test_new_seeds_are_fresh_and_256_bit() -> None:
    seeds = {shuffle.new_server_seed() for _ in range(100)}
    assert len(seeds) == 100
    assert all(len(s) == 32 for s in seeds)


def test_two_decks_shuffle_104_cards_holding_every_code_twice() -> None:
    deck = shuffle.derive_deck(EXAMPLE_SEED, None, decks=2)
    assert len(deck) == 104
    assert Counter(deck) == dict.fromkeys(CANONICAL_DECK, 2)
    assert is_deck(deck, 2)
    assert not is_deck(deck, 1)
    assert shuffle.derive_deck(EXAMPLE_SEED, "lucky", decks=2) != deck  # client seed counts
    assert shuffle.derive_deck(EXAMPLE_SEED, None, decks=2) == deck  # deterministic
    for seed in _fixed_seeds(200):
        assert is_deck(shuffle.derive_deck(seed, None, decks=2), 2)


def test_one_deck_is_unchanged_by_the_decks_parameter() -> None:
    assert shuffle.derive_deck(EXAMPLE_SEED, None, decks=1) == tuple(EXAMPLE_DECK)
    assert shuffle.derive_deck(EXAMPLE_SEED, "lucky", decks=1) == tuple(LUCKY_DECK)
    assert shuffle.derive_deck(EXAMPLE_SEED, None, decks=1) == shuffle.derive_deck(EXAMPLE_SEED)


def test_two_deck_shuffle_is_the_same_fisher_yates_over_two_canonical_decks() -> None:
    """Reimplemented from the docstring: HMAC words, rejection sampling, 104 positions."""

    def words() -> Iterator[int]:
        k = 0
        while True:
            msg = b"vegas-solitaire/shuffle/1" + b"\x00\x00" + k.to_bytes(8, "big")
            block = hmac.new(EXAMPLE_SEED, msg, hashlib.sha256).digest()
            for i in range(0, 32, 4):
                yield int.from_bytes(block[i : i + 4], "big")
            k += 1

    stream = words()
    deck = list(CANONICAL_DECK) * 2
    for i in range(103, 0, -1):
        n = i + 1
        limit = 2**32 - (2**32 % n)
        w = next(stream)
        while w >= limit:
            w = next(stream)
        j = w % n
        deck[i], deck[j] = deck[j], deck[i]
    assert tuple(deck) == shuffle.derive_deck(EXAMPLE_SEED, None, decks=2)


def test_deck_commitment_is_sha256_of_the_salt_then_the_space_separated_codes() -> None:
    salt = bytes(range(32, 64))
    commitment = shuffle.deck_commitment(EXAMPLE_DECK, salt)
    text = " ".join(EXAMPLE_DECK).encode("ascii")
    assert commitment == hashlib.sha256(salt + text).hexdigest()
    assert commitment != hashlib.sha256(text).hexdigest()  # never the bare deck
    assert shuffle.deck_commitment(tuple(EXAMPLE_DECK), salt) == commitment  # list or tuple
    assert shuffle.deck_commitment(LUCKY_DECK, salt) != commitment
    assert shuffle.deck_commitment(EXAMPLE_DECK, bytes(32)) != commitment  # the salt counts
    with pytest.raises(ValueError, match="32 bytes"):
        shuffle.deck_commitment(EXAMPLE_DECK, b"short")


def test_deck_matches_its_commitment_only() -> None:
    salt = bytes(range(32, 64))
    commitment = shuffle.deck_commitment(EXAMPLE_DECK, salt)
    assert shuffle.deck_matches(EXAMPLE_DECK, salt.hex(), commitment)
    assert shuffle.deck_matches(tuple(EXAMPLE_DECK), salt.hex(), commitment)
    assert not shuffle.deck_matches(LUCKY_DECK, salt.hex(), commitment)
    swapped = [EXAMPLE_DECK[1], EXAMPLE_DECK[0], *EXAMPLE_DECK[2:]]
    assert not shuffle.deck_matches(swapped, salt.hex(), commitment)  # order matters
    assert not shuffle.deck_matches(EXAMPLE_DECK[:-1], salt.hex(), commitment)
    assert not shuffle.deck_matches(EXAMPLE_DECK, bytes(32).hex(), commitment)
    assert not shuffle.deck_matches(EXAMPLE_DECK, salt.hex().upper(), commitment)
    assert not shuffle.deck_matches(EXAMPLE_DECK, salt.hex(), shuffle.commitment(EXAMPLE_SEED))


def test_seed_matches_its_commitment_only() -> None:
    commitment = shuffle.commitment(EXAMPLE_SEED)
    assert shuffle.seed_matches(EXAMPLE_SEED.hex(), commitment)
    assert not shuffle.seed_matches(bytes(32).hex(), commitment)
    assert not shuffle.seed_matches("not hex", commitment)
    assert not shuffle.seed_matches(EXAMPLE_SEED.hex()[:-2], commitment)


# --- fairness -----------------------------------------------------------------------------------

DECKS = 5200  # 100 expected per (position, card) cell
Shuffler = Callable[[bytes], tuple[Card, ...]]


def _fixed_seeds(count: int) -> list[bytes]:
    return [hashlib.sha256(f"chi-square seed {i}".encode()).digest() for i in range(count)]


def _chi2_critical(df: int, alpha: float) -> float:
    """Upper-tail critical value of chi-square (Wilson-Hilferty; accurate for df >= 30)."""
    z = NormalDist().inv_cdf(1 - alpha)
    return float(df * (1 - 2 / (9 * df) + z * (2 / (9 * df)) ** 0.5) ** 3)


def _position_counts(shuffler: Shuffler) -> list[dict[Card, int]]:
    counts: list[dict[Card, int]] = [dict.fromkeys(CANONICAL_DECK, 0) for _ in range(52)]
    for seed in _fixed_seeds(DECKS):
        for position, card in enumerate(shuffler(seed)):
            counts[position][card] += 1
    return counts


def _unbiased(counts: list[dict[Card, int]]) -> bool:
    """Every position's card counts and the whole 52x52 table pass chi-square at 99%."""
    expected = DECKS / 52
    per_position = [sum((c - expected) ** 2 / expected for c in row.values()) for row in counts]
    # Bonferroni: 52 position tests at 1% overall, plus the whole table at 1%.
    position_limit = _chi2_critical(51, 0.01 / 52)
    table_limit = _chi2_critical(51 * 51, 0.01)
    return max(per_position) < position_limit and sum(per_position) < table_limit


@pytest.fixture(scope="module")
def published_counts() -> list[dict[Card, int]]:
    return _position_counts(shuffle.derive_deck)


def test_every_derived_deck_is_a_permutation_of_52() -> None:
    for seed in _fixed_seeds(2000):
        deck = shuffle.derive_deck(seed)
        assert len(deck) == 52
        assert set(deck) == ALL_CARDS


def test_no_position_bias_at_the_99_percent_level(
    published_counts: list[dict[Card, int]],
) -> None:
    assert _unbiased(published_counts)


def _modulo_biased(seed: bytes) -> tuple[Card, ...]:
    """The classic mistake the published algorithm avoids: one byte, reduced modulo n."""
    stream = hashlib.shake_256(seed).digest(51)
    deck = list(CANONICAL_DECK)
    for k, i in enumerate(range(51, 0, -1)):
        j = stream[k] % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def test_the_bias_check_catches_a_modulo_biased_shuffle() -> None:
    """The fairness test has teeth: the same check rejects a shuffle with modulo bias."""
    assert not _unbiased(_position_counts(_modulo_biased))


# --- redeals ------------------------------------------------------------------------------------


def _spec_redeal_blocks() -> list[list[str]]:
    """The three-line card blocks of SHUFFLE.md's redeal example (gathered, then shuffled)."""
    line = r"(?:[2-9TJQKA][SHDC] ?)+"
    return [b.split() for b in re.findall(rf"```\n({line}\n{line}\n{line})\n```", SPEC)]


def test_spec_redeal_example_is_what_the_code_derives() -> None:
    dealt = THREE_SHUFFLES.deal(EXAMPLE_DECK)
    gathered = [c for p in FAN_PILES for c in dealt.pile(p).up]
    shuffled = shuffle.redeal(EXAMPLE_SEED, None, "redeal-1", gathered)
    assert _spec_redeal_blocks() == [gathered, list(shuffled)]
    message = b"vegas-solitaire/redeal/1\x00\x00redeal-1\x00" + (0).to_bytes(8, "big")
    assert f"`{message.hex()}`" in SPEC
    assert f"`{hmac.new(EXAMPLE_SEED, message, hashlib.sha256).hexdigest()}`" in SPEC


def test_a_redeal_is_a_permutation_keyed_by_seed_client_seed_and_label() -> None:
    cards = list(CANONICAL_DECK[:30])
    first = shuffle.redeal(EXAMPLE_SEED, None, "redeal-1", cards)
    assert Counter(first) == Counter(cards)
    assert first == shuffle.redeal(EXAMPLE_SEED, None, "redeal-1", cards)  # deterministic
    assert first != shuffle.redeal(EXAMPLE_SEED, None, "redeal-2", cards)
    assert first != shuffle.redeal(EXAMPLE_SEED, "lucky", "redeal-1", cards)
    assert first != shuffle.redeal(bytes(32), None, "redeal-1", cards)
    # Its own word stream: not the deal's shuffle of the same cards.
    assert shuffle.redeal(EXAMPLE_SEED, None, "redeal-1", CANONICAL_DECK) != tuple(EXAMPLE_DECK)
    assert shuffle.redealer(EXAMPLE_SEED, None)("redeal-1", cards) == first


@pytest.mark.parametrize("label", ["", "Redeal-1", "redeal 1", "x" * 33])
def test_a_redeal_label_is_1_to_32_of_lowercase_digits_and_dashes(label: str) -> None:
    with pytest.raises(ValueError, match="redeal label"):
        shuffle.redeal(EXAMPLE_SEED, None, label, ["AS", "2S"])


def test_redeals_have_no_position_bias() -> None:
    """Each of 12 cards lands in each of 12 places about equally often over 12,000 redeals."""
    cards = list(CANONICAL_DECK[:12])
    counts: Counter[tuple[Card, int]] = Counter()
    runs = 12_000
    for n in range(runs):
        seed = hashlib.sha256(n.to_bytes(4, "big")).digest()
        for place, card in enumerate(shuffle.redeal(seed, None, "redeal-1", cards)):
            counts[card, place] += 1
    expected = runs / 12
    # 144 cells, each binomial(12000, 1/12): sd ~ 30; 5 sd is far beyond chance.
    assert all(abs(counts[c, p] - expected) < 5 * 30.3 for c in cards for p in range(12))
