"""``python -m tests.benchmarks``: run every benchmark and print its figures."""

from __future__ import annotations

import platform
import sys
import time

from tests.benchmarks import audit, duels, growth, hot_path, http, rules, store, withdrawal

SUITES = {
    "rules": rules.run,
    "store": store.run,
    "http": http.run,
    "hot_path": hot_path.run,
    "audit": audit.run,
    "duels": duels.run,
    "growth": growth.run,
    "withdrawal": withdrawal.run,
}


def main(argv: list[str]) -> None:
    chosen = argv or list(SUITES)
    print(f"# benchmarks on {platform.node()}, Python {platform.python_version()}")
    for name in chosen:
        print(f"\n## {name}")
        started = time.perf_counter()
        for line in SUITES[name]():
            print(f"- {line}", flush=True)
        print(f"  ({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
