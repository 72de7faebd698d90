"""Command-line tools, as Flask CLI groups: ``flask --app service db upgrade`` and
``flask --app service projections rebuild``."""

from __future__ import annotations

import click
from flask import Flask

from service import db
from service.config import Settings
from service.rebuild import rebuild
from service.wiring import build


def register(app: Flask) -> None:
    app.cli.add_command(db_group)
    app.cli.add_command(projections_group)


@click.group("db", help="The database: migrations.")
def db_group() -> None:
    pass


@db_group.command(
    "upgrade", help="Apply pending migrations (starts the embedded server if no DATABASE_URL)."
)
def db_upgrade() -> None:
    url = db.database_url(Settings.from_env())
    applied = db.migrate(url)
    click.echo(f"applied: {', '.join(applied)}" if applied else "nothing to apply: up to date")


@click.group("projections", help="Read models kept from the event log.")
def projections_group() -> None:
    pass


@projections_group.command("rebuild", help="Recompute projections from the event log.")
@click.option("--check", is_flag=True, help="Only report differences; change nothing.")
def projections_rebuild(check: bool) -> None:
    container = build()
    try:
        with container.unit_of_work() as uow:
            report = rebuild(uow, apply=not check)
    finally:
        container.close()
    click.echo(f"read {report.events} events up to position {report.position}")
    for diff in report.differences:
        click.echo(f"  {diff.table} {diff.key}: live {diff.live!r} rebuilt {diff.rebuilt!r}")
    verb = "replaced" if report.applied else "differ"
    click.echo(f"{len(report.differences)} row(s) {verb}")
    if check and report.differences:
        raise SystemExit(1)
