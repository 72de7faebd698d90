"""Finance: the daily report (JSON or CSV) and the reconciliation of ledger against games."""

from __future__ import annotations

from typing import Any

from flask import Response, request
from marshmallow import RAISE

from service.api.auth import allow
from service.api.blueprint import Blueprint
from service.api.docs import AUTHENTICATED, BEARER, problems
from service.api.schemas.reports import (
    DailyChartQuerySchema,
    DailyQuerySchema,
    DailyReportSchema,
    ReconciliationQuerySchema,
    ReconciliationSchema,
    WalletReconciliationSchema,
)
from service.api.wiring import services
from service.services import finance_books as finance

blp = Blueprint("reports", __name__, description="Finance reports and reconciliation")

CSV = "text/csv"
SVG = "image/svg+xml"


@blp.route("/v1/reports/daily", methods=["GET"])
@allow("finance")
@blp.doc(
    security=BEARER,
    summary="Per day and variant: games, stakes, payouts, refunds, GGR, RTP, money held",
    description="Days are UTC; every day and variant in the range has a row, zeros included. "
    "GGR = stakes - payouts - refunds; RTP = payouts / (stakes - refunds). With "
    "Accept: text/csv the same rows, then the period, month-to-date and lifetime totals. "
    "Certification games are played for the sandbox currency XTS and never count in a real "
    "currency's figures; currency=XTS reports them on their own (sandbox: true). The figures "
    "are the log's as it stood when asked: background work folds it into the finance "
    "projections first, and 503 projection-unavailable if it did not in time.",
)
@blp.arguments(DailyQuerySchema, location="query", unknown=RAISE)
@blp.response(200, DailyReportSchema)
@blp.alt_response(
    200,
    description="The same report as CSV",
    content_type=CSV,
    schema={"type": "string"},
    success=True,
)
@problems(blp, *AUTHENTICATED, 422)
def daily(query: dict[str, Any]) -> Any:
    reports = services().reports
    report = reports.daily(query["start"], query["end"], query["currency"])
    published = reports.published()
    if _wants_csv():
        name = f"daily-{report.currency}-{report.start}-{report.end}.csv"
        return _csv(finance.report_csv(report), name)
    return {
        "currency": report.currency,
        "sandbox": report.sandbox,
        "start": report.start,
        "end": report.end,
        "days": [
            {
                **_totals(line.totals),
                "day": line.day,
                "variant": line.variant,
                "held_at_end": line.held_at_end,
            }
            for line in report.lines
        ],
        "variants": [
            {**_totals(totals), "variant": variant, "published": published.get(variant)}
            for variant, totals in report.by_variant().items()
        ],
        "period": _totals(report.period),
        "month_to_date": _totals(report.month_to_date),
        "lifetime": _totals(report.lifetime),
        "advantage_play": report.advantage_play,
        "safer_gambling": report.safer_gambling,
        "wallet": reports.wallet_liability(report.currency),
    }


def _wants_csv() -> bool:
    return request.accept_mimetypes.best_match(["application/json", CSV]) == CSV


def _csv(text: str, name: str) -> Response:
    """A CSV answer, downloaded as ``name``."""
    return Response(
        text, mimetype=CSV, headers={"Content-Disposition": f'attachment; filename="{name}"'}
    )


def _totals(totals: finance.Totals) -> dict[str, Any]:
    return {
        "games_started": totals.games_started,
        "games_finished": totals.games_finished,
        "stakes": totals.stakes,
        "payouts": totals.payouts,
        "refunds": totals.refunds,
        "ggr": totals.ggr,
        "rtp": totals.rtp,
    }


@blp.route("/v1/reports/daily/chart", methods=["GET"])
@allow("finance")
@blp.doc(
    security=BEARER,
    summary="The daily report drawn as an SVG chart",
    description="chart=money: stakes, payouts and GGR per day in major units (one variant, or "
    "all); chart=rtp: each game's actual RTP over the period against its published RTP, or "
    "with variant that game's actual RTP day by day against it. The same figures as GET "
    "/v1/reports/daily, standing alone (no remote script or font).",
)
@blp.arguments(DailyChartQuerySchema, location="query", unknown=RAISE)
@blp.doc(
    responses={
        "200": {
            "description": "An SVG chart (the same bytes for a client that asks for any "
            "binary: generated clients read it as bytes)",
            "content": {
                SVG: {"schema": {"type": "string", "format": "binary"}},
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
            },
        }
    }
)
@problems(blp, *AUTHENTICATED, 422)
def daily_chart(query: dict[str, Any]) -> Any:
    svg = services().reports.chart(
        query["chart"], query["start"], query["end"], query["currency"], query["variant"]
    )
    return Response(svg, mimetype=SVG)


@blp.route("/v1/reconciliation/wallet", methods=["GET"])
@allow("finance", "auditor")
@blp.doc(
    security=BEARER,
    summary="Seamless mode: a day's movements with the operator's wallet, each in its final state",
    description="Every bet, win and rollback the server made with the operator's wallet on the "
    "day (UTC, by when it was made), for the operator to match against its own: round, "
    "external_ref, method, transaction_uuid, reference (a win's or rollback's bet), amount in "
    "minor units and in the wire's 1/100,000, currency, first sent, final state (confirmed, "
    "refused, rolled-back, pending, review) and its time, attempts. With Accept: text/csv the "
    "same rows in those fixed columns. Empty in transfer mode.",
)
@blp.arguments(ReconciliationQuerySchema, location="query", unknown=RAISE)
@blp.response(200, WalletReconciliationSchema)
@blp.alt_response(
    200,
    description="The same rows as CSV",
    content_type=CSV,
    schema={"type": "string"},
    success=True,
)
@problems(blp, *AUTHENTICATED, 422)
def wallet_reconciliation(query: dict[str, Any]) -> Any:
    rows = services().reports.wallet_day(query["day"])
    if _wants_csv():
        return _csv(finance.wallet_csv(rows), f"wallet-{query['day']}.csv")
    return {"date": query["day"], "transactions": [finance.wallet_line(r) for r in rows]}


@blp.route("/v1/reconciliation", methods=["GET"])
@allow("finance", "auditor")
@blp.doc(
    security=BEARER,
    summary="A day's ledger totals against the game events, with every mismatch by game",
    description="The nightly stored result when there is one, else computed now.",
)
@blp.arguments(ReconciliationQuerySchema, location="query", unknown=RAISE)
@blp.response(200, ReconciliationSchema)
@problems(blp, *AUTHENTICATED, 422)
def reconciliation(query: dict[str, Any]) -> Any:
    found = services().reports.reconciliation(query["day"])
    return {
        **found.result,
        "date": query["day"],
        "stored": found.stored,
        "computed_at": found.computed_at,
    }
