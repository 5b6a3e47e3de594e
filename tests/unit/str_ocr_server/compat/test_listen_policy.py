"""Loopback by default; beyond it, only with a server that has the overflow fix or when the operator says so."""

from __future__ import annotations

import pytest

from str_ocr.contract import DEFAULT_PORTS
from str_ocr_server.cli import main, parse_args
from str_ocr_server.compat import OVERFLOW_FIXED_IN
from str_ocr_server.compat.listen_policy import ACCEPT_FLAG, addresses, is_loopback, refusal
from str_ocr_server.triton import ServerOptions, Triton, local_host, server_command, server_version


def test_the_launcher_listens_on_loopback_unless_told_otherwise():
    args = parse_args([])
    assert args.address == "127.0.0.1" and not args.accept_known_vulnerability


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_is_always_allowed(address):
    assert is_loopback(address) and refusal(address, None, accepted=False) is None


@pytest.mark.parametrize("address", ["0.0.0.0", "::", "10.1.2.3", "ocr.example"])
def test_a_wider_address_needs_a_fixed_server_or_the_flag(address):
    assert not is_loopback(address)
    reason = refusal(address, (2, 51), accepted=False)
    assert reason and ACCEPT_FLAG in reason and "2.51" in reason and address in reason
    assert "unknown release" in refusal(address, None, accepted=False)
    assert refusal(address, (2, 51), accepted=True) is None
    assert refusal(address, OVERFLOW_FIXED_IN, accepted=False) is None


def test_the_release_is_read_from_nvidias_version_file(tmp_path):
    (tmp_path / "bin").mkdir()
    assert server_version(tmp_path / "bin" / "tritonserver") is None
    (tmp_path / "TRITON_VERSION").write_text("2.51.0\n")
    assert server_version(tmp_path / "bin" / "tritonserver") == (2, 51)


def test_every_endpoint_binds_the_address_and_local_clients_find_it(tmp_path):
    options = ServerOptions(repository=tmp_path, ports=DEFAULT_PORTS, address="0.0.0.0")
    command = server_command(Triton(tmp_path / "tritonserver", tmp_path), options, ["text_recognition"])
    assert {f"--{api}-address=0.0.0.0" for api in ("http", "grpc", "metrics")} <= set(command)
    assert local_host("0.0.0.0") == "127.0.0.1" and local_host("10.1.2.3") == "10.1.2.3"
    assert local_host("::1") == "[::1]"


def test_behind_the_http_proxy_the_servers_own_http_stays_on_loopback(tmp_path):
    options = ServerOptions(repository=tmp_path, ports=DEFAULT_PORTS, address="0.0.0.0", http_address="127.0.0.1")
    command = server_command(Triton(tmp_path / "tritonserver", tmp_path), options, ["text_recognition"])
    assert "--http-address=127.0.0.1" in command and "--http-address=0.0.0.0" not in command
    assert {"--grpc-address=0.0.0.0", "--metrics-address=0.0.0.0"} <= set(command)


def test_an_address_given_to_tritonserver_itself_is_checked_too():
    assert addresses("127.0.0.1", ["--http-address=0.0.0.0", "--log-verbose=1", "--grpc-address", "10.0.0.1"]) == [
        "127.0.0.1", "0.0.0.0", "10.0.0.1"]
    assert main(["--", "--http-address=0.0.0.0"]) == 2  # refused before any server starts


def test_every_interface_without_a_proxy_is_refused_with_this_server():
    for proxy_off in ("--no-grpc-guard", "--no-http-guard"):
        assert main(["--address=0.0.0.0", proxy_off]) == 2  # refused before any server starts
