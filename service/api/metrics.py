"""GET /metrics: every process's figures on this host (service/runtime/metrics.py) and what the
database says now (service/services/operations.py), in Prometheus' text format.

Stakes by game are commercial figures: a scrape from this host's loopback interface (and not
through a proxy) needs no key; any other needs a staff key, or an address the operator lists
in METRICS_ALLOW_FROM (the Prometheus server's)."""

from __future__ import annotations

import ipaddress
import logging
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from flask import Blueprint, Flask, Response, request
from prometheus_client.core import GaugeMetricFamily, Metric

from service.api.auth import authenticate, unauthorized
from service.api.problems import Problem
from service.api.request_marks import ACTOR, PROBLEM, REQUEST_ID, ROUTE, UNMATCHED
from service.api.wiring import services
from service.runtime import metrics

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

blp = Blueprint("metrics", __name__)
#: One line a request (service/runtime/logs.py makes it JSON).
access_log = logging.getLogger("service.access")


STAFF = ("operator", "auditor", "finance")
#: How often a web process refreshes its pool's figures (on a request, never in between).
POOL_EVERY = 5.0


def _allowed() -> bool:
    address = request.remote_addr or ""
    try:
        peer = ipaddress.ip_address(address)
    except ValueError:
        peer = None
    proxied = "X-Forwarded-For" in request.headers or "Forwarded" in request.headers
    if peer is not None and peer.is_loopback and not proxied:
        return True
    allowed = services().settings.metrics_allow_from
    if peer is not None and any(peer in network for network in allowed) and not proxied:
        return True
    container = services()
    header = request.headers.get("Authorization", "")
    principal = authenticate(header, container.access)
    if principal is None:
        raise unauthorized(container.access.refusal(header))
    if principal.actor.role not in STAFF:
        raise Problem("forbidden", "metrics are for staff")
    return True


class _DatabaseState:
    """The database's figures, read once per scrape."""

    def collect(self) -> Iterator[Metric]:
        container = services()
        state = container.operations.state()
        depth = container.queue_depth()
        if depth is not None:
            yield _gauge("vegas_broker_queue_depth", "Tasks waiting in the workers' queue", depth)
        up = GaugeMetricFamily(
            "vegas_database_figures_up", "1 if this scrape read the database's figures"
        )
        up.add_metric([], 0 if state is None else 1)
        yield up
        if state is None:
            return
        if state.checkpoint_age_seconds is not None:
            yield _gauge(
                "vegas_checkpoint_age_seconds",
                "Seconds since the log's latest signed checkpoint",
                state.checkpoint_age_seconds,
            )
        yield _gauge("vegas_audits_running", "Audits still running", state.audits_running)
        if state.oldest_audit_seconds is not None:
            yield _gauge(
                "vegas_audit_oldest_running_seconds",
                "Seconds since the oldest running audit started",
                state.oldest_audit_seconds,
            )
        yield _gauge(
            "vegas_audit_latest_findings",
            "Findings of the latest finished audit",
            state.latest_audit_findings,
        )
        yield _gauge(
            "vegas_players_unverified",
            "Players whose wallet moved past their verified point (the verification's lag)",
            state.players_unverified,
        )
        yield _gauge(
            "vegas_withdrawal_holds",
            "Withdrawals the audit's verification has held, ever",
            state.withdrawal_holds,
        )
        yield _gauge("vegas_games_open", "Games in play", state.open_games)
        duels = GaugeMetricFamily("vegas_duels", "Duels by state", labels=["state"])
        for name in ("open", "full", "settled", "cancelled"):
            duels.add_metric([name], state.duels.get(name, 0))
        yield duels
        wallet = GaugeMetricFamily(
            "vegas_wallet_movements",
            "Seamless mode: movements with the operator's wallet still to settle or under review",
            labels=["method", "state"],
        )
        for method in ("bet", "win", "rollback"):
            for status in ("due", "sent", "review"):
                wallet.add_metric([method, status], state.wallet.get((method, status), 0))
        yield wallet
        yield _gauge(
            "vegas_wallet_oldest_unacknowledged_seconds",
            "Seamless mode: seconds since the oldest win or rollback still unacknowledged fell due",
            state.wallet_oldest_seconds or 0,
        )


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation)
    family.add_metric([], value)
    return family


@blp.get("/metrics")
def scrape() -> Any:
    _allowed()
    return Response(metrics.exposition([_DatabaseState()]), content_type=metrics.CONTENT_TYPE)


class Measured:
    """The outermost WSGI layer: every request counted and timed by method, route template and
    status, the hot path's commands and Flask's routes alike."""

    def __init__(self, app: WSGIApplication) -> None:
        self.app = app

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        started = time.perf_counter()
        answered: list[str] = []

        def start(status: str, headers: Any, exc_info: Any = None) -> Any:
            answered.append(status.partition(" ")[0])
            return start_response(status, headers, exc_info)

        try:
            return self.app(environ, start)
        finally:
            took = time.perf_counter() - started
            method = environ.get("REQUEST_METHOD", "")
            route = environ.get(ROUTE, UNMATCHED)
            status = answered[0] if answered else "500"
            metrics.HTTP_REQUESTS.labels(method, route, status).inc()
            metrics.HTTP_LATENCY.labels(method, route).observe(took)
            actor = environ.get(ACTOR)
            access_log.info(
                "request",
                extra={
                    "request_id": environ.get(REQUEST_ID),
                    "method": method,
                    "route": route,
                    "status": int(status),
                    "duration_ms": round(took * 1000, 2),
                    "role": None if actor is None else actor.role,
                    "actor": None if actor is None else actor.id,
                    "problem": environ.get(PROBLEM),
                },
            )


def install(app: Flask) -> None:
    """/metrics, and each request's route template left for Measured (wrap the app's WSGI
    callable in it last); this process's pool figures refreshed every few seconds."""
    app.register_blueprint(blp)
    metrics.describe_build()
    pooled = [0.0]

    @app.before_request
    def label_route() -> None:
        rule = request.url_rule
        request.environ[ROUTE] = rule.rule if rule is not None else UNMATCHED
        now = time.monotonic()
        if now - pooled[0] >= POOL_EVERY:
            pooled[0] = now
            metrics.pool_figures(services().pool.get_stats())
