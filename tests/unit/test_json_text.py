"""The JSON the hash chain covers is the standard library's, byte for byte, and stored JSON reads
back as ``json.loads`` reads it (events/json_text.py): for any JSON value, including the ones
orjson would read or write differently (integers past 64 bits, tiny floats, NaN, DEL, line
separators, lone surrogates), and for every event of random games of every registered game."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from events import codec
from events.json_text import canonical_json, loads
from service.games import GAMES
from tests import random_play

ANY_CHARACTER = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
TEXT = st.text(ANY_CHARACTER, max_size=12) | st.sampled_from(["\x7f", "\u2028", "\ud800", "é"])
NUMBERS = (
    st.integers()
    | st.integers(min_value=2**63 - 2, max_value=2**64 + 2)
    | st.integers(min_value=-(2**63) - 2, max_value=-(2**63) + 2)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([1e-05, 1e16, 1e-7, 5e-324, -0.0, 1.7976931348623157e308])
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | NUMBERS | TEXT,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(TEXT, inner, max_size=5),
    max_leaves=25,
)


def _stdlib(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


@settings(max_examples=500)
@given(JSON_VALUES)
def test_the_canonical_encoding_is_the_standard_librarys_byte_for_byte(value: Any) -> None:
    assert canonical_json(value) == _stdlib(value)


@settings(max_examples=500)
@given(JSON_VALUES, st.booleans())
def test_stored_json_reads_back_as_the_standard_library_reads_it(
    value: Any, ascii_only: bool
) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    raw = text.encode("utf-8", "surrogatepass")
    try:
        expected = json.loads(raw)
    except ValueError as refused:  # a lone surrogate sent as raw bytes: not UTF-8
        with pytest.raises(type(refused)):
            loads(raw)
        return
    # Compared through the standard encoding: it tells 1 from 1.0 and NaN from null.
    assert _stdlib(loads(raw)) == _stdlib(expected)
    assert _stdlib(loads(text)) == _stdlib(json.loads(text))


@pytest.mark.parametrize(
    "text",
    ["18446744073709551616", "-9223372036854775809", "[1e400]", '"\\ud800"', "NaN", "-0"],
)
def test_what_orjson_reads_differently_is_read_as_the_standard_library_reads_it(
    text: str,
) -> None:
    assert _stdlib(loads(text.encode())) == _stdlib(json.loads(text))


@pytest.mark.parametrize("variant", sorted(GAMES))
def test_every_event_a_game_records_encodes_and_reads_back_unchanged(variant: str) -> None:
    for event in random_play.events(variant, seed=2):
        _, _, data = codec.encode(event)
        assert canonical_json(data) == _stdlib(data)
        assert loads(json.dumps(data).encode()) == data
