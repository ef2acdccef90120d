"""TLS files checked before gRPC is given them, by the server and the SDK alike: gRPC names
none of the usual mistakes (``serve`` given a key that is not its certificate's said its
port was in use; a bot given one retried for 15 s and said the server might not be running).
Standard library only: ``ssl`` loads the files, and a certificate's validity is read from its
DER."""

from __future__ import annotations

import datetime
import ipaddress
import re
import ssl
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ClientTls",
    "TlsFileError",
    "check_ca",
    "check_key_pair",
    "client_tls",
    "names",
    "names_host",
    "not_valid_after",
]

_CERT_BLOCK = re.compile(rb"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", re.DOTALL)
_KEY_BEGIN = re.compile(rb"-----BEGIN ([A-Z ]*)PRIVATE KEY-----")


class TlsFileError(ValueError):
    """A certificate, key or CA file that cannot serve: the message names the file and why."""


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise TlsFileError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def _certificates(path: str, what: str) -> list[bytes]:
    """The PEM certificate blocks of a file; TlsFileError when it has none."""
    data = _read(path, what)
    blocks = _CERT_BLOCK.findall(data)
    if not blocks:
        found = _KEY_BEGIN.search(data)
        hint = " (it holds a private key: swapped with the key file?)" if found else ""
        raise TlsFileError(f"{what} {path} holds no PEM certificate{hint}")
    return list(blocks)


def not_valid_after(pem_block: bytes) -> datetime.datetime:
    """The end of a PEM certificate's validity (UTC). ValueError for a malformed one."""
    der = ssl.PEM_cert_to_DER_cert(pem_block.decode("ascii"))
    tbs = _children(_children(der)[0])  # Certificate: SEQUENCE { tbsCertificate, ... }
    start = 1 if tbs[0][0] == 0xA0 else 0  # [0] version, when present
    validity = _children(tbs[start + 3])  # serial, signature, issuer, validity
    return _time(validity[1])


#: The subjectAltName extension's id (2.5.29.17), as an OBJECT IDENTIFIER element.
_SAN_OID = (0x06, bytes([0x55, 0x1D, 0x11]))


def names(pem_block: bytes) -> tuple[list[str], list[str]]:
    """The DNS names and IP addresses the subjectAltName of a PEM certificate (the first of
    a chain) lists: what TLS clients check a host against (the common name is not).
    ValueError for a malformed one."""
    first = _CERT_BLOCK.search(pem_block)
    if first is None:
        raise ValueError("no PEM certificate")
    der = ssl.PEM_cert_to_DER_cert(first.group(0).decode("ascii"))
    dns: list[str] = []
    ips: list[str] = []
    for tag, value in _children(_children(der)[0]):
        if tag != 0xA3:  # [3] extensions
            continue
        for _, extension in _children(_children((tag, value))[0]):
            parts = _children((0x30, extension))
            if not parts or parts[0] != _SAN_OID:
                continue
            for kind, name in _children(_element(parts[-1][1], 0)[:2]):
                if kind == 0x82:  # [2] dNSName
                    dns.append(name.decode("ascii").lower())
                elif kind == 0x87:  # [7] iPAddress
                    ips.append(str(ipaddress.ip_address(name)))
    return dns, ips


def names_host(pem_block: bytes, host: str) -> bool:
    """Whether a client dialling ``host`` accepts the certificate's names (a wildcard
    ``*.example.org`` stands for one label)."""
    dns, ips = names(pem_block)
    try:
        return str(ipaddress.ip_address(host.strip("[]"))) in ips
    except ValueError:
        pass
    wanted = host.lower().rstrip(".")
    for name in dns:
        if name == wanted:
            return True
        if name.startswith("*.") and "." in wanted and wanted.split(".", 1)[1] == name[2:]:
            return True
    return False


def _children(element: bytes | tuple[int, bytes]) -> list[tuple[int, bytes]]:
    """The (tag, content) elements inside a DER SEQUENCE (given whole, or as tag and
    content)."""
    content = _element(element, 0)[1] if isinstance(element, bytes) else element[1]
    found: list[tuple[int, bytes]] = []
    at = 0
    while at < len(content):
        tag, value, at = _element(content, at)
        found.append((tag, value))
    return found


def _element(data: bytes, at: int) -> tuple[int, bytes, int]:
    """The DER element at ``at``: its tag, its content and where the next one starts."""
    tag, length = data[at], data[at + 1]
    at += 2
    if length & 0x80:
        count = length & 0x7F
        length = int.from_bytes(data[at : at + count], "big")
        at += count
    if at + length > len(data):
        raise ValueError("truncated DER")
    return tag, data[at : at + length], at + length


def _time(element: tuple[int, bytes]) -> datetime.datetime:
    tag, value = element
    text = value.decode("ascii")
    if tag == 0x17:  # UTCTime YYMMDDHHMMSSZ: 50..99 are the 1900s
        year = int(text[:2])
        text = f"{1900 + year if year >= 50 else 2000 + year}{text[2:]}"
    elif tag != 0x18:  # GeneralizedTime YYYYMMDDHHMMSSZ
        raise ValueError(f"not a time: tag {tag}")
    stamp = datetime.datetime.strptime(text, "%Y%m%d%H%M%SZ")
    return stamp.replace(tzinfo=datetime.UTC)


def check_key_pair(
    cert_path: str, key_path: str, now: datetime.datetime | None = None
) -> tuple[bytes, bytes]:
    """The certificate's and key's bytes, once checked: PEM, the key unencrypted and the
    certificate's, and the certificate not expired. TlsFileError naming the file otherwise."""
    cert = _read(cert_path, "TLS certificate")
    key = _read(key_path, "TLS key")
    blocks = _certificates(cert_path, "TLS certificate")
    found = _KEY_BEGIN.search(key)
    if found is None:
        hint = " (it holds a certificate: swapped with the certificate file?)"
        raise TlsFileError(
            f"TLS key {key_path} holds no PEM private key{hint if _CERT_BLOCK.search(key) else ''}"
        )
    if found.group(1) == b"ENCRYPTED " or b"Proc-Type: 4,ENCRYPTED" in key:
        raise TlsFileError(
            f"TLS key {key_path} is encrypted; gRPC needs it unencrypted "
            "(openssl pkey -in KEY -out PLAIN.key, and keep that file private)"
        )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert_path, key_path, password=b"")
    except ssl.SSLError as exc:
        if "KEY_VALUES_MISMATCH" in str(exc):
            raise TlsFileError(
                f"TLS key {key_path} is not the key of the certificate {cert_path}"
            ) from None
        raise TlsFileError(
            f"TLS certificate {cert_path} or key {key_path} cannot be loaded: {exc.reason or exc}"
        ) from None
    try:
        ends = not_valid_after(blocks[0])
    except (ValueError, IndexError):
        raise TlsFileError(f"TLS certificate {cert_path} is malformed") from None
    when = now or datetime.datetime.now(datetime.UTC)
    if ends < when:
        raise TlsFileError(
            f"TLS certificate {cert_path} expired on {ends:%Y-%m-%d %H:%M} UTC: renew it"
        )
    return cert, key


def check_ca(path: str, what: str) -> bytes:
    """A CA file's bytes, once checked to hold PEM certificates ``ssl`` can load."""
    data = _read(path, what)
    _certificates(path, what)
    try:
        ssl.create_default_context(cafile=path)
    except ssl.SSLError as exc:
        raise TlsFileError(f"{what} {path} cannot be loaded: {exc.reason or exc}") from None
    return data


#: The environment variables a bot started against a TLS server finds its files in (beside
#: ``--tls-ca``, ``--tls-cert`` and ``--tls-key`` on its command line).
TLS_ENV = {"ca": "MEDINA_TLS_CA", "cert": "MEDINA_TLS_CERT", "key": "MEDINA_TLS_KEY"}


@dataclass(frozen=True)
class ClientTls:
    """How a client dials a server over TLS: the files of ``--tls-ca``, ``--tls-cert`` and
    ``--tls-key`` (absolute paths) and their bytes, checked. ``ca`` None trusts the system's
    roots; ``cert`` and ``key`` are given together (mutual TLS) or not at all."""

    ca_path: str | None
    cert_path: str | None
    key_path: str | None
    ca: bytes | None
    cert: bytes | None
    key: bytes | None

    def options(self) -> list[str]:
        """The same settings as the SDK's command-line options, for a bot's command line."""
        out: list[str] = []
        for flag, path in (
            ("--tls-ca", self.ca_path),
            ("--tls-cert", self.cert_path),
            ("--tls-key", self.key_path),
        ):
            if path is not None:
                out += [flag, path]
        return out

    def ssl_context(self) -> ssl.SSLContext:
        """A client context for these settings as gRPC uses them (HTTP/2, the host name
        checked against the server's certificate)."""
        context = ssl.create_default_context(cadata=self.ca.decode("ascii") if self.ca else None)
        if self.cert_path is not None and self.key_path is not None:
            context.load_cert_chain(self.cert_path, self.key_path)
        context.set_alpn_protocols(["h2"])
        return context

    def environment(self) -> dict[str, str]:
        """The same settings as environment variables (``MEDINA_TLS_CA``, ...)."""
        paths = {"ca": self.ca_path, "cert": self.cert_path, "key": self.key_path}
        return {TLS_ENV[k]: v for k, v in paths.items() if v is not None}


def client_tls(
    ca: str | None, cert: str | None = None, key: str | None = None, prefix: str = "--tls"
) -> ClientTls | None:
    """The client's TLS settings from the files of ``--tls-ca``, ``--tls-cert`` and
    ``--tls-key`` (None when none is given: in clear), checked before anything connects:
    TlsFileError naming the option and the file (unreadable, not PEM, a key that is not the
    certificate's, an expired certificate), or that a certificate came without its key.
    ``prefix``: the options' names without ``-ca``/``-cert``/``-key``, as the messages say
    them (``ladder serve`` dials its arena with ``--arena-tls-ca`` ...)."""
    if ca is None and cert is None and key is None:
        return None
    if (cert is None) != (key is None):
        raise TlsFileError(
            f"mutual TLS needs both the client certificate and its key ({prefix}-cert and "
            f"{prefix}-key go together)"
        )
    try:
        ca_pem = check_ca(ca, f"{prefix}-ca") if ca is not None else None
        pair = check_key_pair(cert, key) if cert is not None and key is not None else None
    except TlsFileError as exc:
        raise TlsFileError(f"{exc} ({prefix}-ca, {prefix}-cert, {prefix}-key)") from None

    def absolute(path: str | None) -> str | None:
        return None if path is None else str(Path(path).resolve())

    return ClientTls(absolute(ca), absolute(cert), absolute(key), ca_pem, *(pair or (None, None)))
