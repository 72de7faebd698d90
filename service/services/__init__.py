"""The service layer: each use case (deal, play, join a duel, deposit, audit, report, sign a
checkpoint, rebuild the projections...) as a method run in one unit of work.

It imports the core to decide and ``service.storage`` (through the unit of work) to read and
write; the API, the worker and the CLI call it. It never imports the web (``flask``,
``service.api``), the broker (``celery``, ``service.worker``) or the runtime's processes
(contracts in pyproject.toml).
"""
