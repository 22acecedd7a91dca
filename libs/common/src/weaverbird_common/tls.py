"""TLS for every gRPC hop: credentials from PEM files, and a throwaway local CA for `weaverbird up` and tests.

In a cluster the certificates come from a Secret or cert-manager; each service presents its own
certificate as a server and as a client (mutual TLS), so a callee knows which service is calling from
the certificate's common name (see auth.py).
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class TlsFiles:
    """PEM files of one identity: its certificate chain, its private key, and the CA that signs its peers."""

    cert: Path
    key: Path
    ca: Path

    def read(self) -> tuple[bytes, bytes, bytes]:
        return self.cert.read_bytes(), self.key.read_bytes(), self.ca.read_bytes()


def tls_files(cert: Path | None, key: Path | None, ca: Path | None) -> TlsFiles | None:
    """The files of one identity from three optional settings; None (plaintext) unless all are set."""
    return TlsFiles(cert, key, ca) if cert and key and ca else None


def server_credentials(files: TlsFiles, *, require_client_cert: bool = True) -> grpc.ServerCredentials:
    """Server side of (mutual) TLS: with `require_client_cert` a caller without a certificate signed by
    the CA fails the handshake, before any RPC."""
    cert, key, ca = files.read()
    return grpc.ssl_server_credentials([(key, cert)], root_certificates=ca, require_client_auth=require_client_cert)


def channel_credentials(ca: Path, files: TlsFiles | None = None) -> grpc.ChannelCredentials:
    """Client side: trust `ca`; present `files`' certificate when given (service-to-service mTLS)."""
    if files is None:
        return grpc.ssl_channel_credentials(root_certificates=ca.read_bytes())
    cert, key, _ = files.read()
    return grpc.ssl_channel_credentials(root_certificates=ca.read_bytes(), private_key=key, certificate_chain=cert)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    path.write_bytes(pem)
    path.chmod(0o600)


class LocalCA:
    """A certificate authority in one directory (ca.pem, ca.key), created on first use and reused after.

    For `weaverbird up` and tests only: production certificates come from the cluster's issuer.
    """

    def __init__(self, directory: Path, *, days: int = 365) -> None:
        self.directory = directory
        self._days = days
        directory.mkdir(parents=True, exist_ok=True)
        self.cert_path, self._key_path = directory / "ca.pem", directory / "ca.key"
        if not (self.cert_path.exists() and self._key_path.exists()):
            self._create()
        self._key = serialization.load_pem_private_key(self._key_path.read_bytes(), password=None)
        self._cert = x509.load_pem_x509_certificate(self.cert_path.read_bytes())

    def _create(self) -> None:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name("WeaverBird local CA"))
            .issuer_name(_name("WeaverBird local CA"))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=self._days))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
            )  # digital signature, cert sign, CRL sign
            .sign(key, hashes.SHA256())
        )
        _write_key(self._key_path, key)
        self.cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))

    def issue(self, identity: str, hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> TlsFiles:
        """A certificate for `identity` (its common name), valid as server for `hosts` and as client."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        names: list[x509.GeneralName] = []
        for host in hosts:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                names.append(x509.DNSName(host))
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(identity))
            .issuer_name(self._cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=self._days))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                critical=False,
            )
            .sign(self._key, hashes.SHA256())  # type: ignore[arg-type]  # an EC key, made by _create
        )
        files = TlsFiles(self.directory / f"{identity}.pem", self.directory / f"{identity}.key", self.cert_path)
        _write_key(files.key, key)
        files.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return files
