"""The background shell: the Celery app the worker and beat run (``app``), its configuration
(``config``), the tasks (``tasks``, each calling a service and safe to run twice) and the
filesystem broker of `make run` (``broker_files``). It may import the services and the
composition root; nothing outside it but the composition root imports it.
"""
