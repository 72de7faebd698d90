"""Vegas Solitaire game server: what the system does (rules, deciders, wallet, HTTP, tasks)."""

from __future__ import annotations

from typing import Any

from flask import Flask, abort, request

from service.errors import RuleViolation
from service.paytable import default_paytables, paytable_for
from service.variants import RULES_VERSION, VARIANTS


def create_app() -> Flask:
    """The Flask app factory (``flask --app service run``)."""
    app = Flask(__name__)
    paytables = default_paytables()
    from service import cli

    cli.register(app)

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/v1/variants")
    def variants() -> dict[str, Any]:
        return {
            "rules_version": RULES_VERSION,
            "variants": [
                {"name": v.name, "title": v.title, "draw_count": v.draw_count, "passes": v.passes}
                for v in VARIANTS.values()
            ],
        }

    @app.get("/v1/quote")
    def quote() -> dict[str, Any]:
        try:
            table = paytable_for(paytables, request.args.get("currency", "GBP"))
            q = table.quote(int(request.args.get("stake", table.default_stake)))
        except (RuleViolation, ValueError) as exc:
            abort(422, str(exc))
        return {
            "stake": q.stake,
            "currency": q.currency,
            "win_rate": q.win_rate,
            "max_payout": q.max_payout,
            "max_net_win": q.max_net_win,
            "previous_stake": q.previous_stake,
            "next_stake": q.next_stake,
        }

    return app
