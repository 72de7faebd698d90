"""JSON text in and out of the event store, fast and exactly as the standard library has it.

- :func:`canonical_json` is the encoding the hash chain covers (events.chain): the standard
  library's own C encoder, built once instead of on every call as ``json.dumps`` with options
  does, so its output is ``json.dumps``'s byte for byte (tests/unit/test_json_text.py).
- :func:`loads` reads stored JSON (psycopg's json/jsonb columns) with orjson, handing back to
  ``json.loads`` the texts orjson reads differently: integers past 64 bits (orjson makes them
  floats) and anything it refuses (lone surrogates, numbers out of a double's range). The
  result equals ``json.loads``'s; a verifier re-encoding it finds the bytes that were hashed.
"""

from __future__ import annotations

import json
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

import orjson

_SETTINGS = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _standard(value: Any) -> str:
    return _SETTINGS.encode(value)


if c_make_encoder is None:  # a Python built without the C accelerator
    canonical_json = _standard
else:

    def canonical_json(value: Any) -> str:
        """Keys sorted, no whitespace, ASCII only (``json.dumps(value, sort_keys=True,
        separators=(",", ":"), ensure_ascii=True)``). A fresh circular-reference memo per
        call, as ``json.dumps`` has."""
        encode = c_make_encoder(
            {}, _SETTINGS.default, encode_basestring_ascii, None, ":", ",", True, False, True
        )
        return "".join(encode(value, 0))


# Nineteen digits in a row may be an integer orjson would read as a float. (Found by mapping
# every digit to "0" and everything else to a space: several times quicker than a regex.)
_DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= c <= 0x39 else 0x20 for c in range(256))
_LONG_RUN = b"0" * 19


def loads(text: bytes | bytearray | memoryview | str) -> Any:
    """``json.loads(text)``, by orjson where it reads the same."""
    if isinstance(text, str):
        try:
            raw = text.encode()
        except UnicodeEncodeError:  # a lone surrogate, which only json.loads reads
            return json.loads(text)
    else:
        raw = bytes(text)
    if _LONG_RUN not in raw.translate(_DIGITS_AS_ZEROS):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # the standard library decides (and words any error)
    return json.loads(raw)
