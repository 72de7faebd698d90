"""What anyone may read: the variants and paytables, quotes, problem types, and health."""

from __future__ import annotations

from typing import Any

from marshmallow import RAISE

from service.api.auth import allow, require_principal
from service.api.blueprint import Blueprint
from service.api.docs import AUTHENTICATED, BEARER, problems
from service.api.problems import TYPES, Problem
from service.api.schemas.common import ProblemTypeSchema, WhoAmISchema
from service.api.schemas.public import HealthSchema, QuoteQuerySchema, QuoteSchema, VariantsSchema
from service.api.wiring import services
from service.core.controls import game_open, gaming_open
from service.core.paytable import STAKE_GRID, Paytable
from service.games import STANDALONE
from service.games.klondike import VEGAS_DRAW1
from service.rtp.published import Publication, publication
from service.rules.game import GameRules

blp = Blueprint("public", __name__, description="Rules, paytables, quotes and health")


@blp.route("/v1/variants", methods=["GET"])
@blp.doc(summary="Variants, paytables, stake limits and ladders, and the idle policy")
@blp.response(200, VariantsSchema)
@problems(blp)
def variants() -> Any:
    settings = services().settings
    vegas = VEGAS_DRAW1
    off = services().controls.off()
    return {
        "rules_version": vegas.rules_version,
        "gaming_enabled": gaming_open(off),
        "variants": [
            {**_game(game), "enabled": game_open(off, game.id, game.rules_version)}
            for game in STANDALONE.values()
        ],
        "paytables": [
            {
                **t.as_config(),
                "stake_multiple_of": STAKE_GRID,
                "win_rate": f"stake * {t.multiplier_for(vegas.id, vegas.multiplier)} / "
                f"{vegas.max_units}",
                "rates": dict(t.rates),
                "prices": [_price(t, game) for game in STANDALONE.values()],
            }
            for t in settings.paytables.values()
        ],
        "idle_collection": {
            "collect_after_seconds": int(settings.idle_collect_after.total_seconds()),
            "policy": "a game idle this long is collected automatically with the winnings it holds",
        },
    }


@blp.route("/v1/whoami", methods=["GET"])
@allow("operator", "auditor", "finance", player="any")
@blp.doc(
    security=BEARER,
    summary="Who the bearer token is: its role, and the player's id for a player session",
    description="What a front-end (the console, say) needs after sign-in to know which pages "
    "and which player's wallet to show. Staff are named by their key's id, as in events.",
)
@blp.response(200, WhoAmISchema)
@problems(blp, *AUTHENTICATED)
def whoami() -> Any:
    principal = require_principal()
    return {
        "role": principal.role,
        "actor": principal.actor.id,
        "player_id": principal.player_id,
    }


def _game(game: GameRules) -> dict[str, Any]:
    """A game as the lobby lists it: rules, piles, paytable and its published RTP."""
    m, n = game.multiplier, game.max_units
    return {
        "name": game.id,
        "title": game.title,
        "draw_count": game.draw_count,
        "passes": game.passes,
        "family": game.family,
        "rules_version": game.rules_version,
        "decks": game.decks,
        "summary": list(game.summary),
        "undo": game.undo_rule,
        "actions": list(game.actions),
        "piles": [{"id": p.id, "kind": p.kind} for p in game.layout.specs],
        "paytable": {
            "multiplier": m,
            "max_units": n,
            "units": game.units_are,
            "winnings": f"floor(units x stake x {m} / {n})",
            "per_unit": f"stake x {m} / {n}",
            "max_payout": f"stake x {m}",
        },
        "rtp": _rtp(publication(game.id)),
    }


def _price(table: Paytable, game: GameRules) -> dict[str, Any]:
    """What a game pays at this paytable (its own rate, else the rules' M), and what that
    returns to strong play, worked out from the game's published units."""
    m = table.multiplier_for(game.id, game.multiplier)
    found = publication(game.id, m)
    return {
        "variant": game.id,
        "multiplier": m,
        "own_rate": m != game.multiplier,
        "rtp": found.displayed if found else None,
        "beats_the_house": found.beats_the_house if found else False,
    }


def _rtp(found: Publication | None) -> dict[str, Any] | None:
    if found is None:
        return None
    bot = found.bot
    return {
        "rtp": bot.rtp,
        "low": bot.low,
        "high": bot.high,
        "games": bot.games,
        "bot": bot.player,
        "measured": bot.measured,
        "multiplier": found.multiplier,
        "reference": bot,
        "strong": found.strong,
        "clairvoyant": found.clairvoyant,
        "displayed": found.displayed,
        "basis": found.basis,
        "beats_the_house": found.beats_the_house,
    }


@blp.route("/v1/quote", methods=["GET"])
@blp.doc(summary="What a stake wins per unit and at most, before any money moves")
@blp.arguments(QuoteQuerySchema, location="query", unknown=RAISE)
@blp.response(200, QuoteSchema)
@problems(blp, 422)
def quote(query: dict[str, Any]) -> Any:
    q = services().games.quote(query["variant"], query["stake"], query["currency"])
    return {**_fields(q), "variant": query["variant"]}


def _fields(quote: Any) -> dict[str, Any]:
    return {name: getattr(quote, name) for name in quote.__slots__}


@blp.route("/problems/<slug>", methods=["GET"])
@blp.doc(summary="What a problem type means")
@blp.response(200, ProblemTypeSchema)
@problems(blp, 404)
def problem_type(slug: str) -> Any:
    found = TYPES.get(slug)
    if found is None:
        raise Problem("not-found", f"no problem type {slug!r}")
    return {
        "type": found.uri,
        "title": found.title,
        "status": found.status,
        "description": found.description,
    }


@blp.route("/healthz", methods=["GET"])
@blp.doc(summary="The process is up")
@blp.response(200, HealthSchema)
@problems(blp)  # before its first request the app builds its services, which can fail (503)
def healthz() -> Any:
    return {"status": "ok"}


@blp.route("/readyz", methods=["GET"])
@blp.doc(summary="The database answers")
@blp.response(200, HealthSchema)
@problems(blp)
def readyz() -> Any:
    with services().unit_of_work() as uow:
        uow.projections.ping()
    return {"status": "ready"}
