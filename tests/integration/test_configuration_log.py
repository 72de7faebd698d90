"""Configuration changes reach the significant-events log once each, however many processes
start with them."""

from __future__ import annotations

import threading
from dataclasses import replace

from service.bootstrap import Container
from service.services.configuration_log import log_configuration


def _logged(container: Container) -> list[dict[str, object]]:
    with container.unit_of_work() as uow:
        return [e.details for e in uow.significant.page(kind="configuration", limit=100)]


def test_a_configuration_is_logged_when_it_changes_and_only_then(
    fresh_container: Container,
) -> None:
    settings = fresh_container.settings
    with fresh_container.unit_of_work() as uow:
        assert log_configuration(uow, settings, "web-1") is True
    with fresh_container.unit_of_work() as uow:
        assert log_configuration(uow, settings, "worker-1") is False  # the same again
    changed = replace(settings, big_win_threshold=settings.big_win_threshold * 2)
    with fresh_container.unit_of_work() as uow:
        assert log_configuration(uow, changed, "web-2") is True
    newest, first = _logged(fresh_container)
    assert newest["configuration"]["big_win_threshold"] == changed.big_win_threshold  # type: ignore[index]
    assert first["configuration"]["big_win_threshold"] == settings.big_win_threshold  # type: ignore[index]


def test_processes_starting_together_log_a_change_once(fresh_container: Container) -> None:
    changed = replace(fresh_container.settings, certification_mode=False)
    results: list[bool] = []

    def start(name: str) -> None:
        with fresh_container.unit_of_work() as uow:
            results.append(log_configuration(uow, changed, name))

    threads = [threading.Thread(target=start, args=(f"web-{i}",)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 5 + [True]
    assert len(_logged(fresh_container)) == 1
