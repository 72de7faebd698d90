"""gunicorn's worker processes seen from outside (psutil): which clients' connections each
worker holds. Used by tests/api/test_gunicorn.py (connections shared out evenly) and the http
benchmark (how wrk's connections landed)."""

from __future__ import annotations

import psutil


def held_connections(master: psutil.Process, port: int) -> dict[int, set[int]]:
    """Each live worker's pid: the client ports of the established connections to ``port`` it
    holds (a worker killed but not yet reaped by the master is left out)."""
    held = {}
    for worker in master.children():
        try:
            connections = worker.net_connections("tcp")
        except psutil.NoSuchProcess:
            continue
        held[worker.pid] = {
            c.raddr.port
            for c in connections
            if c.status == psutil.CONN_ESTABLISHED and c.laddr.port == port
        }
    return held
