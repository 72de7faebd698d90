"""The operator's wallet over HTTP (issue 37's seamless mode): one signed call, its answer
verified, and what the answer means for the movement (``service.core.seamless.outcome``).

The wire is Hub88's wallet API as the supplier calls it: ``POST {url}/user/balance``,
``/transaction/bet``, ``/win`` and ``/rollback``, JSON bodies. Every request body is signed
RSA-SHA256 (PKCS#1 v1.5) over its exact bytes, base64, in ``X-Hub88-Signature``, with the
server's key; every answer must carry the operator's signature over its exact bytes (this
product's addition to Hub88's protocol: an answer is a money record) by one of the operator's
keys (two during a rotation). Anything short of a verified, readable answer echoing the call's
``request_uuid`` is an **unknown outcome**, never a refusal: a timeout, a refused connection, a
5xx, a body that is not JSON, a missing or wrong signature.

A call holds nothing of the server's while it waits (no transaction, lock or pooled database
connection: callers call it outside them) and is bounded by the configured timeout. The record
of each call (its exact body and signature, the answer's) is returned for the caller to keep
with the round; the operator's session ``token`` in it is the caller's to keep out of logs.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import requests
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from service.core import seamless
from service.runtime import metrics

SIGNATURE_HEADER = "X-Hub88-Signature"
PATHS: Mapping[str, str] = {
    "balance": "/user/balance",
    "bet": "/transaction/bet",
    "win": "/transaction/win",
    "rollback": "/transaction/rollback",
}
Call = Literal["balance", "bet", "win", "rollback"]
MOVEMENTS: Mapping[Call, seamless.Method] = {"bet": "bet", "win": "win", "rollback": "rollback"}
Outcome = seamless.Outcome


def load_private_key(pem: bytes) -> rsa.RSAPrivateKey:
    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError("the wallet signing key must be an RSA private key")
    return key


def load_public_key(pem: bytes) -> rsa.RSAPublicKey:
    key = serialization.load_pem_public_key(pem)
    if not isinstance(key, rsa.RSAPublicKey):
        raise ValueError("the operator's wallet key must be an RSA public key")
    return key


def sign(key: rsa.RSAPrivateKey, body: bytes) -> str:
    return base64.b64encode(key.sign(body, padding.PKCS1v15(), hashes.SHA256())).decode()


def verified(keys: Sequence[rsa.RSAPublicKey], body: bytes, signature: str | None) -> bool:
    """Whether one of ``keys`` signed exactly ``body``."""
    if not signature:
        return False
    try:
        raw = base64.b64decode(signature, validate=True)
    except ValueError:
        return False
    for key in keys:
        try:
            key.verify(raw, body, padding.PKCS1v15(), hashes.SHA256())
        except InvalidSignature:
            continue
        return True
    return False


@dataclass(frozen=True, slots=True)
class Prepared:
    """A call signed and ready for the wire: recorded (its body's digest, the body kept beside
    the round) before it is sent, so a crash mid-call leaves a call with no answer."""

    call: Call
    request_uuid: str
    body: bytes
    signature: str


@dataclass(frozen=True, slots=True)
class Exchange:
    """One call and what came back, as kept with the round (bodies exactly as on the wire)."""

    call: Call
    request_uuid: str
    request_body: bytes
    request_signature: str
    #: The HTTP status, or None when no answer came (a timeout, a refused connection).
    http_status: int | None
    answer_body: bytes | None
    answer_signature: str | None
    #: The answer's ``status`` when the answer was readable, verified and echoed the call's
    #: ``request_uuid``; else None (and ``problem`` says why).
    status: str | None
    #: The balance the verified answer carried, in the wallet's units (1/100,000).
    balance: int | None
    problem: str | None
    outcome: Outcome


class OperatorWallet:
    """The operator's wallet at ``url`` (no trailing slash), signing with ``signing_key`` and
    trusting answers signed by any of ``operator_keys``."""

    def __init__(
        self,
        url: str,
        signing_key: rsa.RSAPrivateKey,
        operator_keys: Sequence[rsa.RSAPublicKey],
        timeout_ms: int,
        session: requests.Session | None = None,
    ) -> None:
        if not operator_keys:
            raise ValueError("at least one operator key is needed to verify answers")
        self._url = url.rstrip("/")
        self._key = signing_key
        self._operator_keys = tuple(operator_keys)
        self._timeout = timeout_ms / 1000
        self.timeout_ms = timeout_ms
        self._session = session or requests.Session()

    def call(
        self, call: Call, fields: Mapping[str, Any], *, bet_confirmed: bool = False
    ) -> Exchange:
        """Send ``fields`` (the protocol's, without ``request_uuid``: a new one is made for
        this HTTP call) and return the exchange. Never raises for the wallet's sake: whatever
        goes wrong on the wire is an unknown outcome. ``bet_confirmed``: see
        ``seamless.outcome``."""
        return self.send(self.prepare(call, fields), bet_confirmed=bet_confirmed)

    def prepare(self, call: Call, fields: Mapping[str, Any]) -> Prepared:
        """The call's exact body, with a new ``request_uuid``, and its signature."""
        request_uuid = str(uuid.uuid4())
        body = json.dumps({**fields, "request_uuid": request_uuid}, separators=(",", ":"))
        raw = body.encode()
        return Prepared(call, request_uuid, raw, sign(self._key, raw))

    def send(self, prepared: Prepared, *, bet_confirmed: bool = False) -> Exchange:
        """Put a prepared call on the wire and return the exchange (see ``call``), counted and
        timed for the metrics by method and outcome."""
        started = time.perf_counter()
        exchange = self._send(prepared, bet_confirmed=bet_confirmed)
        metrics.WALLET_LATENCY.labels(prepared.call).observe(time.perf_counter() - started)
        metrics.WALLET_CALLS.labels(prepared.call, exchange.outcome).inc()
        return exchange

    def _send(self, prepared: Prepared, *, bet_confirmed: bool) -> Exchange:
        call, request_uuid, raw, signature = (
            prepared.call,
            prepared.request_uuid,
            prepared.body,
            prepared.signature,
        )

        def unknown(problem: str, response: requests.Response | None = None) -> Exchange:
            return Exchange(
                call,
                request_uuid,
                raw,
                signature,
                None if response is None else response.status_code,
                None if response is None else response.content,
                None if response is None else response.headers.get(SIGNATURE_HEADER),
                None,
                None,
                problem,
                "unknown",
            )

        try:
            response = self._session.post(
                self._url + PATHS[call],
                data=raw,
                headers={"Content-Type": "application/json", SIGNATURE_HEADER: signature},
                timeout=self._timeout,
            )
        except requests.Timeout:
            return unknown("no answer within the timeout")
        except requests.RequestException as exc:
            return unknown(f"no answer: {type(exc).__name__}")
        if response.status_code != 200:
            return unknown(f"HTTP {response.status_code}", response)
        answer_signature = response.headers.get(SIGNATURE_HEADER)
        if not verified(self._operator_keys, response.content, answer_signature):
            return unknown("the answer's signature does not verify", response)
        try:
            answer = json.loads(response.content)
        except ValueError:
            return unknown("the answer is not JSON", response)
        if not isinstance(answer, dict) or not isinstance(answer.get("status"), str):
            return unknown("the answer has no status", response)
        if answer.get("request_uuid") != request_uuid:
            return unknown("the answer is for another request", response)
        balance = answer.get("balance")
        status: str = answer["status"]
        meaning: Outcome
        if call == "balance":  # a read: it moves nothing
            meaning = "confirmed" if status == seamless.Status.OK else "refused"
        else:
            meaning = seamless.outcome(MOVEMENTS[call], status, bet_confirmed=bet_confirmed)
        return Exchange(
            call,
            request_uuid,
            raw,
            signature,
            response.status_code,
            response.content,
            answer_signature,
            status,
            balance if isinstance(balance, int) and not isinstance(balance, bool) else None,
            None,
            meaning,
        )

    def answer_verifies(self, body: bytes, signature: str | None) -> bool:
        """Whether a kept answer carries one of the operator's signatures (the audit's check)."""
        return verified(self._operator_keys, body, signature)

    def close(self) -> None:
        self._session.close()
