"""A request a dead instance failed is sent again once the server serves, and never past its deadline."""

from __future__ import annotations

import asyncio
import threading
import time

from str_ocr_server.compat.retry import from_dead_instance, send_until_served

DEAD = "Failed to process the request(s) for model instance 'text_recognition_0_0', message: Stub process " \
       "'text_recognition_0_0' is not healthy."


def run(answers: list[str], serving: threading.Event, window: float,
        stopping: threading.Event | None = None) -> tuple[str, int]:
    sent = []

    async def send() -> str:
        sent.append(time.monotonic())
        return answers[min(len(sent), len(answers)) - 1]

    answer = asyncio.run(send_until_served(send, from_dead_instance, serving, stopping or threading.Event(),
                                           time.monotonic() + window))
    return answer, len(sent)


def test_a_request_the_dead_instance_failed_is_answered_by_the_new_one():
    serving = threading.Event()
    serving.set()
    assert run([DEAD, DEAD, "logits"], serving, window=5) == ("logits", 3)


def test_any_other_error_is_the_answer_at_once():
    serving = threading.Event()
    serving.set()
    assert run(["input '308' is not an input", "logits"], serving, window=5) == ("input '308' is not an input", 1)


def test_it_waits_while_the_server_does_not_serve_and_gives_up_at_the_deadline():
    serving = threading.Event()
    start = time.monotonic()
    answer, sent = run([DEAD], serving, window=0.5)
    assert answer == DEAD and sent == 1 and 0.4 < time.monotonic() - start < 2


def test_it_sends_again_once_the_server_serves_again():
    serving = threading.Event()
    threading.Timer(0.3, serving.set).start()
    assert run([DEAD, "logits"], serving, window=5) == ("logits", 2)


def test_a_stopping_launcher_answers_a_held_request_at_once():
    serving, stopping = threading.Event(), threading.Event()
    threading.Timer(0.2, stopping.set).start()
    start = time.monotonic()
    assert run([DEAD, "logits"], serving, window=10, stopping=stopping) == (DEAD, 1)
    assert time.monotonic() - start < 2


def test_only_the_backends_own_words_count_as_a_dead_instance():
    assert from_dead_instance(DEAD)
    assert not from_dead_instance("Request for unknown model: 'is not healthy' is not found")
