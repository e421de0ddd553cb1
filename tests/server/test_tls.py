"""TLS: a server started with a certificate serves secure channels and refuses plaintext."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from cirulla.server.app import start_server
from cirulla.server.client import ManualSeat, hello
from cirulla.v1 import match_service_pb2 as ms
from cirulla.v1 import match_service_pb2_grpc, match_settings_pb2, rules_pb2


def self_signed(tmp: Path) -> tuple[Path, Path]:
    """A throwaway certificate for 127.0.0.1 (IP SAN, so the client checks the name).

    Made with the `cryptography` package (a dev dependency), so the test needs no
    openssl binary and never has to be skipped.
    """
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "cirulla-test")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert, key_path


def test_tls_server_accepts_secure_channels_and_refuses_plaintext(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)

    async def main() -> None:
        srv = await start_server("127.0.0.1:0", tls_cert=cert, tls_key=key)
        try:
            creds = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
            async with grpc.aio.secure_channel(f"127.0.0.1:{srv.port}", creds) as ch:
                stub = match_service_pb2_grpc.MatchServiceStub(ch)
                settings = match_settings_pb2.MatchSettings(
                    rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2))
                )
                created = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings))
                match_id = created.match.match_id
                assert len(created.seat_tokens) == 2
                # A Play stream works over TLS too.
                seat = ManualSeat(stub)
                seat.send(hello(match_id, created.seat_tokens[0].token))
                welcome = (await seat.next("welcome")).welcome
                assert welcome.match_id == match_id and welcome.seat == 0
                seat.close()
            async with grpc.aio.insecure_channel(f"127.0.0.1:{srv.port}") as plain:
                stub = match_service_pb2_grpc.MatchServiceStub(plain)
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.CreateMatch(ms.CreateMatchRequest(settings=settings), timeout=5)
                assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
            assert list(srv.hub.matches) == [match_id]  # the plaintext call created nothing
        finally:
            await srv.stop()

    asyncio.run(main())


def test_tls_needs_both_certificate_and_key(tmp_path: Path) -> None:
    pem = tmp_path / "cert.pem"
    pem.write_text("not used")

    async def main() -> None:
        with pytest.raises(ValueError, match="both --tls-cert and --tls-key"):
            await start_server("127.0.0.1:0", tls_cert=pem)

    asyncio.run(main())


def test_a_missing_tls_file_is_one_line_naming_its_option(tmp_path: Path) -> None:
    """``cirulla server --tls-cert /nonexistent ...`` said only ``[Errno 2] No such file or
    directory: '/nonexistent'``, not which option gave the path."""
    cert, key = self_signed(tmp_path)
    for given, option in (
        (["--tls-cert", str(tmp_path / "gone.pem"), "--tls-key", str(key)], "--tls-cert"),
        (["--tls-cert", str(cert), "--tls-key", str(tmp_path / "gone.pem")], "--tls-key"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "cirulla", "server", "--listen", "127.0.0.1:0", *given],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2, done.stderr
        line = f"cirulla server: {option} {tmp_path / 'gone.pem'}: No such file or directory"
        assert done.stderr.strip() == line, done.stderr
