"""The compiled loaders (events/fast_load.py) never answer other than their schema: for every
event of random games of every registered game and every example event, they load what the
schema loads; for corrupted data, they either defer to the schema or load exactly what it does,
and never accept what it refuses."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import ValidationError

from events import codec
from events.catalog import AnyEvent
from events.fast_load import DEFER
from events.schemas import SCHEMAS
from service.games import GAMES
from tests import random_play
from tests.unit.test_events import EXAMPLES


def _schema_says(cls: type[Any], data: Any) -> Any:
    """What the schema loads from ``data``, or ValidationError's class if it refuses."""
    try:
        return SCHEMAS[cls].load(copy.deepcopy(data))
    except ValidationError:
        return ValidationError


@pytest.mark.parametrize("variant", sorted(GAMES))
def test_every_event_a_game_records_loads_as_its_schema_loads_it(variant: str) -> None:
    recorded = random_play.events(variant, seed=1)
    assert recorded
    for event in recorded:
        kind, _, data = codec.encode(event)
        stored = json.loads(json.dumps(data))  # as the database gives it back
        loaded = codec.FAST[type(event)](stored)
        assert loaded is not DEFER, kind
        assert loaded == _schema_says(type(event), stored) == event


@pytest.mark.parametrize("event", EXAMPLES, ids=lambda e: type(e).__name__)
def test_every_example_event_loads_as_its_schema_loads_it(event: AnyEvent) -> None:
    _, _, data = codec.encode(event)
    stored = json.loads(json.dumps(data))
    loaded = codec.FAST[type(event)](stored)
    assert loaded is not DEFER
    assert loaded == _schema_says(type(event), stored) == event


JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.sampled_from(["", "AS", "ZZ", "tableau:3", "waste", "x" * 600, "0" * 64, "yes"]),
    st.lists(st.sampled_from(["AS", "KH", "Q", 1, None]), max_size=3),
    st.dictionaries(st.sampled_from(["from", "to", "cards", "x"]), st.just("AS"), max_size=2),
)


@settings(max_examples=400, deadline=None)
@given(
    which=st.integers(min_value=0, max_value=len(EXAMPLES) - 1),
    how=st.sampled_from(["replace", "drop", "add", "nested"]),
    pick=st.integers(min_value=0, max_value=1000),
    junk=JUNK,
)
def test_corrupted_data_is_never_accepted_where_the_schema_refuses_it(
    which: int, how: str, pick: int, junk: Any
) -> None:
    event = EXAMPLES[which]
    _, _, data = codec.encode(event)
    stored: dict[str, Any] = json.loads(json.dumps(data))
    keys = sorted(stored)
    key = keys[pick % len(keys)] if keys else "x"
    if how == "replace":
        stored[key] = junk
    elif how == "drop":
        stored.pop(key, None)
    elif how == "add":
        stored[f"extra-{pick}"] = junk
    else:  # inside a list or a nested record, where there is one
        value = stored.get(key)
        if isinstance(value, list) and value:
            item = value[pick % len(value)]
            if isinstance(item, dict) and item:
                item[sorted(item)[pick % len(item)]] = junk
            else:
                value[pick % len(value)] = junk
        else:
            stored[key] = junk
    fast = codec.FAST[type(event)](copy.deepcopy(stored))
    if fast is not DEFER:
        assert fast == _schema_says(type(event), stored)
