"""Command-line tools, as Flask CLI groups: ``flask --app service db upgrade`` and
``flask --app service projections rebuild``."""

from __future__ import annotations

import click
from flask import Flask

from service import db
from service.access import STAFF_ROLES
from service.config import Settings
from service.rebuild import rebuild
from service.wiring import build


def register(app: Flask) -> None:
    app.cli.add_command(db_group)
    app.cli.add_command(projections_group)
    app.cli.add_command(keys_group)


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


@click.group("keys", help="Staff API keys (operator, auditor, finance).")
def keys_group() -> None:
    pass


@keys_group.command("create", help="Create a key; the key itself is the last line printed.")
@click.option("--role", required=True, type=click.Choice(STAFF_ROLES))
@click.option("--name", required=True, help="Who or what holds the key, e.g. cashier-desk-1.")
def keys_create(role: str, name: str) -> None:
    container = build(migrate=False)
    try:
        secret = container.access.create_key(name, role)
    finally:
        container.close()
    click.echo(f"created {role} key {name!r}; store it now, it is not shown again:")
    click.echo(secret)


@keys_group.command("revoke", help="Revoke the live key with this name.")
@click.option("--name", required=True)
def keys_revoke(name: str) -> None:
    container = build(migrate=False)
    try:
        revoked = container.access.revoke_key(name)
    finally:
        container.close()
    if not revoked:
        raise click.ClickException(f"no live key named {name!r}")
    click.echo(f"revoked {name!r}")


@keys_group.command("list", help="Every key, newest first (names and roles, never secrets).")
def keys_list() -> None:
    container = build(migrate=False)
    try:
        for key in container.access.list_keys():
            state = f"revoked {key.revoked_at:%Y-%m-%d %H:%M}" if key.revoked_at else "live"
            click.echo(f"{key.name}\t{key.role}\t{key.created_at:%Y-%m-%d %H:%M}\t{state}")
    finally:
        container.close()
