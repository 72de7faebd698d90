"""Command-line tools, as Flask CLI groups: ``flask --app service db upgrade``,
``flask --app service projections rebuild``, ``flask --app service keys create``,
``flask --app service audit run`` and ``flask --app service checkpoints create``."""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TextIO

import click
from flask import Flask

from service.bootstrap import Container, build
from service.errors import InvalidArgument, LogEmpty
from service.games import STANDALONE, game_named
from service.rtp import published, simulate
from service.rtp.fanout import LostWork, Pending, gather
from service.rtp.players import KINDS, Kind
from service.rtp.roster import player_for
from service.runtime import database as db
from service.runtime.config import ConfigError, Settings
from service.services import advantage
from service.services import history_audits as audit
from service.services.access import STAFF_ROLES
from service.services.compliance import Audits
from service.services.rebuild import rebuild
from service.services.seed_vault import rotate_keys


@contextmanager
def _services(*, background: bool = False) -> Iterator[Container]:
    """The composition root for one command: built without migrating (the owner's job, db
    upgrade), and closed however the command ends; ``background``: as the background work's
    login (BACKGROUND_DATABASE_URL), for what only it may do (migrations/0039)."""
    container = build(migrate=False, background=background)
    try:
        yield container
    finally:
        container.close()


def register(app: Flask) -> None:
    app.cli.add_command(db_group)
    app.cli.add_command(projections_group)
    app.cli.add_command(keys_group)
    app.cli.add_command(seeds_group)
    app.cli.add_command(audit_group)
    app.cli.add_command(checkpoints_group)
    app.cli.add_command(rtp_group)


@click.group("db", help="The database: migrations.")
def db_group() -> None:
    pass


@db_group.command(
    "upgrade",
    help="Apply pending migrations as the owner (MIGRATION_DATABASE_URL, else DATABASE_URL; "
    "with neither, the embedded server, which sets up the owner and service logins).",
)
def db_upgrade() -> None:
    try:
        applied = db.migrate(db.database_urls(Settings.from_env()).migration)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"applied: {', '.join(applied)}" if applied else "nothing to apply: up to date")


@click.group("projections", help="Read models kept from the event log.")
def projections_group() -> None:
    pass


@projections_group.command("rebuild", help="Recompute projections from the event log.")
@click.option("--check", is_flag=True, help="Only report differences; change nothing.")
def projections_rebuild(check: bool) -> None:
    with _services() as container, container.unit_of_work() as uow:
        report = rebuild(uow, apply=not check)
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
    with _services() as container:
        try:
            secret = container.access.create_key(name, role)
        except PermissionError as exc:
            raise click.ClickException(str(exc)) from exc
    click.echo(f"created {role} key {name!r}; store it now, it is not shown again:")
    click.echo(secret)


@keys_group.command("revoke", help="Revoke the live key with this name.")
@click.option("--name", required=True)
@click.option(
    "--sessions/--keep-sessions",
    default=False,
    help="Also revoke every player session the key minted.",
)
def keys_revoke(name: str, sessions: bool) -> None:
    with _services() as container:
        try:
            revoked = container.access.revoke_key(name, sessions=sessions)
        except PermissionError as exc:
            raise click.ClickException(str(exc)) from exc
    if not revoked:
        raise click.ClickException(f"no live key named {name!r}")
    click.echo(f"revoked {name!r}")


@keys_group.command("list", help="Every key, newest first (names and roles, never secrets).")
def keys_list() -> None:
    with _services() as container:
        for key in container.access.list_keys():
            state = f"revoked {key.revoked_at:%Y-%m-%d %H:%M}" if key.revoked_at else "live"
            click.echo(f"{key.name}\t{key.role}\t{key.created_at:%Y-%m-%d %H:%M}\t{state}")


@click.group("seeds", help="Sealed seeds and decks at rest.")
def seeds_group() -> None:
    pass


@seeds_group.command(
    "rotate",
    help="Re-encrypt every sealed seed under the newest key (the first of "
    "SEED_ENCRYPTION_KEYS); the older keys may then be removed.",
)
def seeds_rotate() -> None:
    with _services() as container:
        # As the owner: the service's login may not re-encrypt (migrations/0032).
        count = rotate_keys(container.vault, container.owner_unit_of_work)
    click.echo(f"re-encrypted {count} sealed secret(s) under key {container.vault.key_id}")


@click.group("checkpoints", help="Signed checkpoints of the whole event log.")
def checkpoints_group() -> None:
    pass


@checkpoints_group.command(
    "create", help="Sign a checkpoint of the log now (beat signs one every minute)."
)
@click.option("--by", default="cli", show_default=True, help="Who asks, for the record.")
def checkpoints_create(by: str) -> None:
    with _services(background=True) as container:  # beat's own work, on demand
        try:
            stored, created = container.anchors.checkpoint(by)
        except LogEmpty as exc:
            raise click.ClickException(str(exc)) from None
    verb = "signed" if created else "nothing new since"
    click.echo(f"{verb} checkpoint {stored.seq} at position {stored.position}")


@checkpoints_group.command(
    "export", help="Write a checkpoint (the latest by default) as the JSON file auditors keep."
)
@click.option("--seq", type=click.IntRange(1), help="Which checkpoint.")
@click.option("--output", "-o", type=click.File("w"), default="-", help="File (default stdout).")
def checkpoints_export(seq: int | None, output: TextIO) -> None:
    with _services() as container:
        if seq is None:
            latest = container.anchors.page(before=None, limit=1)
            if not latest:
                raise click.ClickException("no checkpoint yet: run `checkpoints create`")
            seq = latest[0].seq
        document = container.anchors.exported(seq)
    output.write(json.dumps(document, indent=2) + "\n")


@checkpoints_group.command(
    "verify", help="Check exported checkpoint files against the live log; exit 1 on findings."
)
@click.argument("files", nargs=-1, required=True, type=click.File("r"))
def checkpoints_verify(files: tuple[TextIO, ...]) -> None:
    failed = False
    with _services() as container:
        for file in files:
            try:
                document = json.load(file)
            except ValueError as exc:
                raise click.ClickException(f"{file.name}: not JSON ({exc})") from exc
            if not isinstance(document, dict):
                raise click.ClickException(f"{file.name}: not an exported checkpoint")
            checked = container.anchors.check_document(document)
            seq = checked.checkpoint.seq if checked.checkpoint else "?"
            click.echo(
                f"{file.name}: checkpoint {seq}: {'verified' if checked.verified else 'FAILED'}"
            )
            for f in checked.findings:
                click.echo(f"  {f.check} at {f.location}: expected {f.expected}; found {f.found}")
            failed = failed or not checked.verified
    if failed:
        raise SystemExit(1)


@click.group("audit", help="Whole-history audits: every game replayed and re-verified.")
def audit_group() -> None:
    pass


@audit_group.command(
    "run",
    help="Audit every game (or a date range, or one player) and print the findings. The "
    "chunks go to the Celery workers, as POST /v1/audits does; --local checks them here.",
)
@click.option("--from", "start", type=click.DateTime(["%Y-%m-%d"]), help="First day (UTC).")
@click.option("--to", "end", type=click.DateTime(["%Y-%m-%d"]), help="Last day, inclusive.")
@click.option("--player", "player_id", type=click.UUID, help="Only this player's games.")
@click.option("--local", is_flag=True, help="Check in this process, without the workers.")
@click.option("--by", default="cli", show_default=True, help="Who asks, for the audit record.")
def audit_run(
    start: datetime | None,
    end: datetime | None,
    player_id: uuid.UUID | None,
    local: bool,
    by: str,
) -> None:
    scope = _audit_scope(start, end, player_id)
    with _services() as container:
        # The CLI holds the audit's login (AUDIT_DATABASE_URL): it plans the audit itself.
        with container.audit_unit_of_work() as uow:
            audit_id, chunks = audit.start(uow, scope, by)
        if local:
            with click.progressbar(length=sum(map(len, chunks)), label="games checked") as bar:
                for units in chunks:
                    audit.check_chunk(
                        container.audit_unit_of_work,
                        audit_id,
                        units,
                        container.settings.paytables,
                        container.anchors.findings,
                        container.answer_check,
                    )
                    bar.update(len(units))
        else:
            if chunks:
                container.send_task("vegas.run_audit", str(audit_id), chunks)
            _follow(container.audits, audit_id)
        result = container.audits.audit(audit_id)
    _print_audit(result)
    if result.findings:
        raise SystemExit(1)


def _audit_scope(
    start: datetime | None, end: datetime | None, player_id: uuid.UUID | None
) -> audit.Scope:
    if player_id is not None:
        if start or end:
            raise click.UsageError("audit either --player or --from/--to, not both")
        return audit.Scope("player", player_id=player_id)
    if start is None and end is None:
        return audit.Scope("all")
    if start is None or end is None:
        raise click.UsageError("give both --from and --to")
    if end < start:
        raise click.UsageError("--to is before --from")
    return audit.Scope("dates", start=start.date(), end=end.date())


def _follow(audits: Audits, audit_id: uuid.UUID) -> None:
    """A progress bar over the workers' progress, until the audit is done."""
    status = audits.audit(audit_id, findings_limit=0)
    with click.progressbar(length=status.total, label="games checked") as bar:
        shown = 0
        while status.status == "running":
            bar.update(status.checked - shown)
            shown = status.checked
            time.sleep(0.5)
            status = audits.audit(audit_id, findings_limit=0)
        bar.update(status.checked - shown)


def _print_audit(result: audit.AuditStatus) -> None:
    click.echo(
        f"audit {result.audit_id}: {result.status}, {result.checked} of {result.total} checked, "
        f"{result.failed_units} with findings"
    )
    for finding in result.findings:
        click.echo(
            f"  {finding.unit}\t{finding.check}\t{finding.location}\t"
            f"expected {finding.expected}\tfound {finding.found}"
        )


@audit_group.command("show", help="An audit's progress and findings.")
@click.argument("audit_id", type=click.UUID)
def audit_show(audit_id: uuid.UUID) -> None:
    with _services() as container:
        result = container.audits.audit(audit_id)
    _print_audit(result)


@click.group("rtp", help="The RTP lab: what each game returns to a reference bot.")
def rtp_group() -> None:
    pass


@rtp_group.command(
    "table", help="The README's games table, from the published measurements (RTP.md)."
)
def rtp_table() -> None:
    click.echo(published.games_table(), nl=False)


@rtp_group.command(
    "prices",
    help="The README's pricing table: each Klondike variant's M for strong play at 97% "
    "(README: The operator's price).",
)
def rtp_prices() -> None:
    click.echo(published.pricing_table(), nl=False)


@rtp_group.command(
    "watch",
    help="Judge recent players' and every game's returns against the published figures now "
    "(beat does it hourly), log what is significantly above them, and print it.",
)
def rtp_watch() -> None:
    with _services() as container:
        found = advantage.run(
            container.unit_of_work, container.settings.paytables, datetime.now(UTC)
        )
    for report in found:
        state = "logged" if report.logged else "already logged today"
        click.echo(f"{report.subject}\t{state}\t{report.flag.reason}")
    click.echo(f"{len(found)} flagged")


@rtp_group.command(
    "simulate",
    help="Play N seeded deals of a game with its reference bot through the real decider, on "
    "the Celery workers (or here with --local), and print mean units, full-win rate and RTP "
    "with its 95% interval.",
)
@click.option("--game", "game_id", required=True, type=click.Choice(list(STANDALONE)))
@click.option(
    "--player",
    "kind",
    default="bot",
    show_default=True,
    type=click.Choice(KINDS),
    help="bot: the reference heuristic; strong: the searching player that sees only what a "
    "player sees; clairvoyant: the bound that knows every card.",
)
@click.option("--games", "count", default=10_000, show_default=True, type=click.IntRange(1))
@click.option("--chunk", default=250, show_default=True, type=click.IntRange(1))
@click.option("--multiplier", help="Report the RTP at this M instead of the game's own.")
@click.option("--local", is_flag=True, help="Simulate in this process, without the workers.")
@click.option(
    "--save",
    type=click.Path(dir_okay=False, writable=True),
    help="Also write the histogram of units (JSON: units -> deals) to this file.",
)
@click.option(
    "--publish",
    is_flag=True,
    help="Write the histogram into the game's published measurements "
    "(service/rtp/measured/GAME.json), replacing this player kind's.",
)
def rtp_simulate(
    game_id: str,
    kind: Kind,
    count: int,
    chunk: int,
    multiplier: str | None,
    local: bool,
    save: str | None,
    publish: bool,
) -> None:
    try:
        player = player_for(game_named(game_id), kind)
    except InvalidArgument as exc:
        raise click.UsageError(exc.message) from exc
    starts = list(range(0, count, chunk))
    histogram: Counter[int] = Counter()
    with click.progressbar(length=count, label=f"{game_id} deals") as bar:
        if local:
            for start in starts:
                size = min(chunk, count - start)
                histogram.update(simulate.simulate(game_id, start, size, kind))
                bar.update(size)
        else:
            with _services() as container:

                def send(start: int) -> Pending:
                    size = min(chunk, count - start)
                    sent: Pending = container.send_task(
                        "vegas.rtp_chunk", game_id, start, size, kind
                    )
                    return sent

                def done(start: int, part: Mapping[str, int]) -> None:
                    histogram.update({int(u): n for u, n in part.items()})
                    bar.update(min(chunk, count - start))

                try:
                    gather(send, starts, on_done=done)
                except LostWork as exc:
                    raise click.ClickException(str(exc)) from exc
    if save:
        with open(save, "w") as out:
            json.dump({str(u): n for u, n in sorted(histogram.items())}, out)
    found = simulate.rtp_of(game_id, histogram, multiplier)
    if publish:
        command = f"flask --app service rtp simulate --game {game_id} --player {kind} " + (
            f"--games {count}"
        )
        where = published.publish(game_id, kind, player, dict(histogram), command)
        click.echo(f"published   {where}")
    click.echo(f"game        {game_id} ({player.version}, {simulate.LAB})")
    click.echo(f"deals       {found.games}")
    click.echo(f"mean units  {found.mean_units:.3f} of {game_named(game_id).max_units}")
    click.echo(f"full wins   {found.full_wins} ({found.full_wins / found.games:.2%})")
    click.echo(
        f"RTP at M={found.multiplier}  {found.rtp} (95% interval {found.low} to {found.high})"
    )
