"""The reference wallet in a process of its own, for tests: started on a free port (it picks
one itself and says which, so no other process can take it in between), waited for until it
listens, and stopped quickly (terminate, then kill). Calls to it are signed as the supplier
signs them."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from tests.wallet.keys import SIGNATURE_HEADER, PrivateKey, TestKeys, sign, verify

PROJECT_ROOT = Path(__file__).resolve().parents[2]
LISTENING = "reference wallet listening on "
PATHS = {
    "balance": "/user/balance",
    "bet": "/transaction/bet",
    "win": "/transaction/win",
    "rollback": "/transaction/rollback",
}


class WalletDidNotStart(RuntimeError):
    pass


@dataclass
class RunningWallet:
    url: str
    keys: TestKeys
    process: subprocess.Popen[bytes]
    log_path: Path

    def post(
        self,
        method: str,
        payload: dict[str, Any],
        *,
        timeout: float = 5.0,
        signed_by: PrivateKey | None = None,
        signature: str | None = None,
    ) -> requests.Response:
        """``payload`` to the ``method`` endpoint, signed with the supplier's key (or
        ``signed_by``, or the given ``signature`` header as it is)."""
        body = json.dumps(payload).encode()
        if signature is None:
            signature = sign(signed_by or self.keys.supplier, body)
        headers = {"Content-Type": "application/json"}
        if signature:
            headers[SIGNATURE_HEADER] = signature
        return requests.post(self.url + PATHS[method], data=body, headers=headers, timeout=timeout)

    def call(self, method: str, payload: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
        """The answer to a signed call, which must be a 200 the operator signed."""
        response = self.post(method, payload, timeout=timeout)
        assert response.status_code == 200, response.text
        assert self.operator_signed(response), "the answer's signature does not verify"
        found = response.json()
        assert isinstance(found, dict)
        return found

    def operator_signed(self, response: requests.Response) -> bool:
        return verify(
            self.keys.operator.public_key(),
            response.content,
            response.headers.get(SIGNATURE_HEADER),
        )

    def admin(self, verb: str, path: str, body: dict[str, Any] | None = None) -> Any:
        response = requests.request(verb, f"{self.url}/_admin/{path}", json=body, timeout=5)
        assert response.ok, f"{verb} {path}: {response.status_code} {response.text}"
        return response.json()

    def journal(self, **filters: str) -> list[dict[str, Any]]:
        query = "&".join(f"{name}={value}" for name, value in filters.items())
        entries: list[dict[str, Any]] = self.admin("GET", f"journal?{query}")["entries"]
        return entries

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


def listening_url(process: subprocess.Popen[bytes], log_path: Path, timeout: float) -> str:
    """The URL the wallet says it listens on (WalletDidNotStart if it does not in time)."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([process.stdout], [], [], left)
        if not ready:
            break
        line = process.stdout.readline().decode()
        if not line:  # the process ended
            break
        if line.startswith(LISTENING):
            return line[len(LISTENING) :].strip()
    log = log_path.read_text(errors="replace")[-3000:]
    raise WalletDidNotStart(f"the wallet did not say it listens (exit {process.poll()}):\n{log}")


def stop(process: subprocess.Popen[bytes], grace: float = 2.0) -> None:
    """Terminate, then kill if it has not gone within ``grace`` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stdout is not None:
        process.stdout.close()


@contextmanager
def running_wallet(
    folder: Path, keys: TestKeys | None = None, start_timeout: float = 20.0
) -> Iterator[RunningWallet]:
    """A wallet process on a free port of 127.0.0.1, its key files and log in ``folder``."""
    keys = keys or TestKeys.generate()
    files = keys.write(folder)
    log_path = folder / "wallet.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.wallet",
                "--port",
                "0",
                "--supplier-public-key",
                str(files.supplier_public),
                "--operator-private-key",
                str(files.operator_private),
            ],
            cwd=PROJECT_ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
        )
        try:
            url = listening_url(process, log_path, start_timeout)
            wallet = RunningWallet(url, keys, process, log_path)
            wallet.admin("GET", "health")
            yield wallet
        finally:
            stop(process)
