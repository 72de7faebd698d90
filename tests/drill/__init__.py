"""The project's own fault drills (`make drill`, ``python -m tests.drill``).

The drill starts the service as `make run` does, in a data folder of its own, drives it with
many retrying clients, injects faults (kill -9 of an API worker, of the Celery worker mid-task,
of the whole service, a database outage), lets it settle, and checks that nothing acknowledged
was lost or applied twice, that the books balance, and that audits and reconciliation are
clean. Modules: ``config`` (settings), ``service`` (the service's processes and database),
``client`` (retrying HTTP), ``load`` (simulated players), ``faults``, ``facts`` (the SQL the
checks read), ``checks`` (pure computation), ``report`` (the table), ``run`` (the whole drill).
"""
