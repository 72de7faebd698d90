"""Loading stored events fast, by loaders compiled once from the marshmallow schemas.

events/schemas.py stays the one definition of every event's shape. From each schema this module
builds a plain function that checks a stored event's data the way the schema would (the exact
set of keys, each value's type, the schema's own validator objects, nested schemas) and makes
the catalog event as the schema's post_load does, without marshmallow's machinery around it,
which costs ten times the checks. A loader only ever says yes to data the schema would load to
the same event: anything else (a missing or unknown key, a value of another type that the schema
might convert, a validator's refusal, a construct it was not built for) makes it answer
DEFER, and the codec asks marshmallow, which gives the event or the exact error.
tests/unit/test_fast_load.py checks that against the schemas for every event of random games of
every game, and for corrupted ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from marshmallow import Schema, ValidationError, fields, validate

#: What a loader answers when it cannot vouch for the schema's answer.
DEFER: Any = object()

Loader = Callable[[Any], Any]


def compile_schema(schema: Schema) -> Loader | None:
    """A loader for ``schema``'s events, or None if it has hooks beyond making the event (a
    schema-level validation, say): those are always loaded by marshmallow."""
    if schema.unknown != "raise":
        return None
    checks_of_schema: list[Callable[..., Any]] = []
    for kind, hooks in schema._hooks.items():
        for name, many, options in hooks:
            if kind == "post_load" and name == "make_event":
                continue
            # Reached only when every field is valid, so skip_on_field_errors changes nothing.
            passes_more = any(v for k, v in options.items() if k != "skip_on_field_errors")
            if kind == "validates_schema" and not many and not passes_more:
                checks_of_schema.append(getattr(schema, name))
                continue
            return None  # a hook this module was not built for
    event_class = schema.event_class  # type: ignore[attr-defined]
    checks: list[tuple[str, str, Loader]] = []
    for name, field in schema.fields.items():
        if not field.required or field.dump_only:
            return None
        check = _field(field)
        if check is None:
            return None
        checks.append((field.data_key or name, name, check))
    keys = frozenset(key for key, _, _ in checks)

    def load(data: Any) -> Any:
        if type(data) is not dict or data.keys() != keys:
            return DEFER
        values: dict[str, Any] = {}
        for key, name, check in checks:
            value = check(data[key])
            if value is DEFER:
                return DEFER
            values[name] = value
        for check_schema in checks_of_schema:
            try:
                check_schema(values)
            except ValidationError:
                return DEFER
        # JSON arrays become tuples, as EventSchema.make_event makes them.
        for name, value in values.items():
            if type(value) is list:
                values[name] = tuple(value)
        return event_class(**values)

    return load


def _field(field: fields.Field[Any]) -> Loader | None:
    allow_none = field.allow_none
    kind: Loader | None
    if type(field) is fields.String:
        kind = _string
    elif type(field) is fields.Integer and field.strict:
        kind = _integer
    elif type(field) is fields.Boolean:
        kind = _boolean
    elif type(field) is fields.List:
        inner = _field(field.inner)
        if inner is None:
            return None
        kind = _list_of(inner)
    elif type(field) is fields.Nested and not field.many:
        nested = field.schema
        kind = compile_schema(nested) if isinstance(nested, Schema) else None
        if kind is None:
            return None
    else:
        return None
    if not field.validators and not allow_none:
        return kind
    if kind is _string and not allow_none and len(field.validators) == 1:
        plain = _plain_string(field.validators[0])
        if plain is not None:
            return plain
    if kind is _integer and not allow_none and len(field.validators) == 1:
        plain = _plain_integer(field.validators[0])
        if plain is not None:
            return plain
    load_kind = kind
    passes = tuple(_passes(v) for v in field.validators)

    def check(value: Any) -> Any:
        if value is None:
            return None if allow_none else DEFER
        loaded = load_kind(value)
        if loaded is DEFER:
            return DEFER
        for ok in passes:
            if not ok(loaded):
                return DEFER
        return loaded

    return check


def _passes(validator: Callable[[Any], Any]) -> Callable[[Any], bool]:
    """Whether a value passes one of a field's validators: the two the schemas use most, with
    the same test made cheaper (a set for OneOf's choices, the pattern itself for Regexp);
    any other by calling it."""
    if type(validator) is validate.OneOf:
        try:
            members = frozenset(validator.choices)
        except TypeError:
            members = None
        if members is not None:
            found = members

            def one_of(value: Any) -> bool:
                try:
                    return value in found
                except TypeError:
                    return False

            return one_of
    if type(validator) is validate.Regexp:
        pattern = validator.regex
        return lambda value: pattern.match(value) is not None

    def passes(value: Any) -> bool:
        try:
            return validator(value) is not False
        except ValidationError:
            return False

    return passes


def _plain_string(validator: Any) -> Loader | None:
    """A required string with one Regexp or OneOf: one test, no loop (the commonest fields:
    pile ids and cards)."""
    if type(validator) is validate.Regexp:
        match = cast(Any, validator.regex).match  # a str pattern: the schemas compile text
        return lambda value: value if type(value) is str and match(value) is not None else DEFER
    if type(validator) is validate.OneOf:
        try:
            members = frozenset(validator.choices)
        except TypeError:
            return None
        return lambda value: value if type(value) is str and value in members else DEFER
    return None


def _plain_integer(validator: Any) -> Loader | None:
    """A required integer with one Range (counts, amounts, seats): the bounds compared here,
    inclusive or not as the Range says."""
    if type(validator) is not validate.Range:
        return None
    low, high = validator.min, validator.max
    low_in, high_in = validator.min_inclusive, validator.max_inclusive

    def load(value: Any) -> Any:
        if type(value) is not int:
            return DEFER
        if low is not None and (value < low if low_in else value <= low):
            return DEFER
        if high is not None and (value > high if high_in else value >= high):
            return DEFER
        return value

    return load


def _string(value: Any) -> Any:
    return value if type(value) is str else DEFER


def _integer(value: Any) -> Any:
    return value if type(value) is int else DEFER  # never a bool, never a float


def _boolean(value: Any) -> Any:
    return value if type(value) is bool else DEFER  # "yes", 1 and the like: the schema's call


def _list_of(inner: Loader) -> Loader:
    def load(value: Any) -> Any:
        if type(value) is not list:
            return DEFER
        loaded = []
        for item in value:
            one = inner(item)
            if one is DEFER:
                return DEFER
            loaded.append(one)
        return loaded

    return load


def compile_all(schemas: Mapping[type[Any], Schema]) -> dict[type[Any], Loader]:
    """A loader for every schema that can have one."""
    found = {}
    for cls, schema in schemas.items():
        loader = compile_schema(schema)
        if loader is not None:
            found[cls] = loader
    return found
