"""`python -m tests.wallet`: the reference operator wallet on a port of its own.

    python -m tests.wallet --keys /tmp/wallet-keys --port 8765
    python -m tests.wallet --port 8765 \\
        --supplier-public-key supplier.pub.pem --operator-private-key operator.pem

It prints one line, "reference wallet listening on http://HOST:PORT", once it listens
(--port 0 picks a free port: read it from that line).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from tests.wallet.keys import KeyFiles, TestKeys, load_private_key, load_public_key
from tests.wallet.reference import serve

DESCRIPTION = "The reference operator wallet on a port of its own."


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tests.wallet", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0: any free port")
    parser.add_argument(
        "--keys",
        type=Path,
        help="a folder of the four PEM files (supplier.pem, supplier.pub.pem, operator.pem, "
        "operator.pub.pem); a test pair is generated into it when it has none",
    )
    parser.add_argument(
        "--supplier-public-key", type=Path, help="PEM: verifies the supplier's requests"
    )
    parser.add_argument("--operator-private-key", type=Path, help="PEM: signs the wallet's answers")
    parser.add_argument("--quiet", action="store_true", help="no log line per request")
    found = parser.parse_args(argv)
    if found.keys is None and not (found.supplier_public_key and found.operator_private_key):
        parser.error("give --keys, or both --supplier-public-key and --operator-private-key")
    return found


def main(argv: list[str] | None = None) -> None:
    arguments = _arguments(argv)
    supplier_public: Path | None = arguments.supplier_public_key
    operator_private: Path | None = arguments.operator_private_key
    if arguments.keys is not None:
        files = KeyFiles.in_folder(arguments.keys)
        if not files.supplier_public.exists():
            TestKeys.generate().write(arguments.keys)
            print(f"generated a test key pair for each side in {arguments.keys}", flush=True)
        supplier_public = supplier_public or files.supplier_public
        operator_private = operator_private or files.operator_private
    assert supplier_public is not None
    assert operator_private is not None
    if arguments.quiet:
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = serve(
        load_public_key(supplier_public),
        load_private_key(operator_private),
        arguments.host,
        arguments.port,
    )
    # The line a harness waits for: the socket is bound and listening by now.
    print(f"reference wallet listening on {server.url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
