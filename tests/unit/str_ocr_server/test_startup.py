"""How often the launcher starts a server again, and which protocols it serves in front of which server."""

from __future__ import annotations

import time

from str_ocr_server.cli import parse_args, proxied_protocols
from str_ocr_server.startup import RestartBudget


def test_restarts_are_bounded_within_the_window_and_allowed_again_after_it():
    budget = RestartBudget(count=2, window=0.3)
    assert budget.take() and budget.take() and not budget.take()
    time.sleep(0.35)
    assert budget.take()


def test_a_server_before_the_overflow_fix_gets_both_proxies_a_fixed_one_only_http():
    args = parse_args([])
    assert proxied_protocols(args, None) == ["http", "grpc"]
    assert proxied_protocols(args, (2, 51)) == ["http", "grpc"]
    assert proxied_protocols(args, (2, 67)) == ["http"]
    assert proxied_protocols(parse_args(["--no-http-guard", "--no-grpc-guard"]), (2, 51)) == []


def test_the_restart_flags_and_todays_flags_are_listed(capsys):
    try:
        parse_args(["--help"])
    except SystemExit:
        pass
    text = capsys.readouterr().out
    for flag in ("--model-repository", "--config-name", "--models", "--http-port", "--grpc-port", "--metrics-port",
                 "--watchdog", "--restrict-admin", "--restarts", "--restart-window", "--no-http-guard",
                 "--no-grpc-guard", "--accept-known-vulnerability"):
        assert flag in text
