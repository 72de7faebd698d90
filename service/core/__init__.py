"""The functional core: pure rules of the service, no I/O.

The deciders (a game, a duel), scoring, paytables, the ledger's rules (what each event moves),
the verifiable shuffle, stream names, snapshots, what each user may see (views), verification of
a recorded game, duel or log, the regulatory replay, the certification dealing policy, who is asking
(context) and the clock's format. It may import ``events`` (the record), ``service.rules`` and
``service.games`` (the games' rules), ``service.errors`` and itself; never storage, the
database, the web, the broker, the services or the runtime (import-linter contracts in
pyproject.toml, run by ``make lint``).
"""
