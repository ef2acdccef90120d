"""A throwaway PKI for TLS tests, made in memory with ``cryptography``: a CA, a server
certificate for 127.0.0.1, a client certificate, and a second CA nobody trusts."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Pki:
    """PEM bytes."""

    ca: bytes
    server_cert: bytes
    server_key: bytes
    client_cert: bytes
    client_key: bytes
    rogue_client_cert: bytes  # signed by a CA the server does not trust
    rogue_client_key: bytes


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _builder(
    cn: str,
    issuer: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    days: float = 1.0,
    since_days: float = 1 / 24,
) -> x509.CertificateBuilder:
    """A certificate for ``cn`` by ``issuer`` on ``key``'s public half, valid from
    ``since_days`` ago to ``days`` from now (negative: expired)."""
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(_name(cn))
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=since_days))
        .not_valid_after(now + datetime.timedelta(days=days))
    )


def _ca(cn: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _key()
    cert = (
        _builder(cn, _name(cn), key)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _leaf(
    cn: str,
    ca: tuple[x509.Certificate, ec.EllipticCurvePrivateKey],
    san: x509.GeneralName,
    usage: x509.ObjectIdentifier,
) -> tuple[bytes, bytes]:
    key = _key()
    cert = (
        _builder(cn, ca[0].subject, key)
        .add_extension(x509.SubjectAlternativeName([san]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .sign(ca[1], hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


def make_pki() -> Pki:
    """A fresh PKI (keys are generated per call)."""
    ca = _ca("medina-test-ca")
    rogue = _ca("rogue-ca")
    server = _leaf(
        "server",
        ca,
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        ExtendedKeyUsageOID.SERVER_AUTH,
    )
    client = _leaf("bot", ca, x509.DNSName("bot"), ExtendedKeyUsageOID.CLIENT_AUTH)
    rogue_client = _leaf("bot", rogue, x509.DNSName("bot"), ExtendedKeyUsageOID.CLIENT_AUTH)
    return Pki(
        ca=ca[0].public_bytes(serialization.Encoding.PEM),
        server_cert=server[0],
        server_key=server[1],
        client_cert=client[0],
        client_key=client[1],
        rogue_client_cert=rogue_client[0],
        rogue_client_key=rogue_client[1],
    )


def self_signed(cn: str, days: float) -> tuple[bytes, bytes]:
    """A self-signed server certificate for 127.0.0.1 whose validity ends ``days`` from now
    (negative: it has expired), and its key; PEM."""
    key = _key()
    cert = (
        _builder(cn, _name(cn), key, days=days, since_days=abs(days) + 2)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


def encrypted(key_pem: bytes, password: bytes) -> bytes:
    """A PEM private key encrypted with ``password``."""
    key = serialization.load_pem_private_key(key_pem, None)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(password),
    )


def named_cert(dns: list[str], ips: list[str]) -> bytes:
    """A self-signed certificate whose subjectAltName lists ``dns`` names and ``ips``; PEM."""
    key = _key()
    alt: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
    alt += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    cert = (
        _builder("named", _name("named"), key)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM)
