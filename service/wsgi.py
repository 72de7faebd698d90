"""The WSGI entry point gunicorn serves (``service.wsgi:app``): one app per worker process,
its services (database pool included) built at start rather than on the first request."""

from __future__ import annotations

import os

from service.app import create_app
from service.bootstrap import build
from service.runtime.config import Settings
from service.services.configuration_log import log_configuration

# The web process never holds the audit's login (migrations/0037) nor background work's (0039).
_container = build(Settings.from_env(), migrate=False, audit_login=False, background_login=False)
with _container.unit_of_work() as _uow:
    log_configuration(_uow, _container.settings, f"web-{os.getpid()}")
app = create_app(_container)
