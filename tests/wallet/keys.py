"""RSA keys and the body signatures both sides of the wallet API use: RSA-SHA256, PKCS#1 v1.5,
over a body's exact bytes, base64 in the X-Hub88-Signature header. A client can reuse
`sign` and `verify` as they are."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

SIGNATURE_HEADER = "X-Hub88-Signature"

PrivateKey = rsa.RSAPrivateKey
PublicKey = rsa.RSAPublicKey


def generate_private_key() -> PrivateKey:
    """A fresh 2048-bit key: test keys only, never written anywhere that outlives a run."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def sign(private_key: PrivateKey, body: bytes) -> str:
    """The header value for ``body``."""
    signature = private_key.sign(body, padding.PKCS1v15(), hashes.SHA256())
    return base64.b64encode(signature).decode("ascii")


def verify(public_key: PublicKey, body: bytes, signature: str | None) -> bool:
    """Whether ``signature`` (a header value, maybe absent) signs exactly ``body``."""
    if not signature:
        return False
    try:
        raw = base64.b64decode(signature, validate=True)
        public_key.verify(raw, body, padding.PKCS1v15(), hashes.SHA256())
    except (InvalidSignature, binascii.Error, ValueError):
        return False
    return True


def private_pem(key: PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def public_pem(key: PublicKey) -> bytes:
    return key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def load_private_key(path: Path) -> PrivateKey:
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError(f"{path}: not an RSA private key")
    return key


def load_public_key(path: Path) -> PublicKey:
    key = serialization.load_pem_public_key(path.read_bytes())
    if not isinstance(key, rsa.RSAPublicKey):
        raise ValueError(f"{path}: not an RSA public key")
    return key


@dataclass(frozen=True)
class TestKeys:
    """Both parties' keys: the supplier (our game server) signs requests, the operator (the
    wallet) signs answers."""

    __test__ = False  # not a pytest test class, whatever its name

    supplier: PrivateKey
    operator: PrivateKey

    @classmethod
    def generate(cls) -> TestKeys:
        return cls(supplier=generate_private_key(), operator=generate_private_key())

    def write(self, folder: Path) -> KeyFiles:
        """The four PEM files in ``folder``, named as `python -m tests.wallet` expects."""
        folder.mkdir(parents=True, exist_ok=True)
        files = KeyFiles.in_folder(folder)
        files.supplier_private.write_bytes(private_pem(self.supplier))
        files.supplier_public.write_bytes(public_pem(self.supplier.public_key()))
        files.operator_private.write_bytes(private_pem(self.operator))
        files.operator_public.write_bytes(public_pem(self.operator.public_key()))
        for path in (files.supplier_private, files.operator_private):
            path.chmod(0o600)
        return files


@dataclass(frozen=True)
class KeyFiles:
    supplier_private: Path
    supplier_public: Path
    operator_private: Path
    operator_public: Path

    @classmethod
    def in_folder(cls, folder: Path) -> KeyFiles:
        return cls(
            supplier_private=folder / "supplier.pem",
            supplier_public=folder / "supplier.pub.pem",
            operator_private=folder / "operator.pem",
            operator_public=folder / "operator.pub.pem",
        )
