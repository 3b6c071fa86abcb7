"""Fixtures of the fault suite: real services on loopback driven into each fault (docs/operations.md).

The SMTP receiver is the digest tests' aiosmtpd server with a script: a reply to RCPT TO for chosen addresses, a
reply to the end of the message from the n-th message on, a connection dropped at RCPT TO, a reply held back past
the client's timeout.
"""

from __future__ import annotations

import asyncio
import email
from email import policy

import pytest
from aiosmtpd.controller import Controller

from tests.digest.conftest import SmtpRecorder, _fresh_cache, _tasks_in_process, catalog, free_port, world  # noqa: F401


class ScriptedRelay(SmtpRecorder):
    def __init__(self):
        super().__init__()
        self.data_reply_from: tuple[int, str] | None = None  # (n, reply): the n-th message on gets this reply
        self.drop_at_rcpt: set[str] = set()
        self.late_for: set[str] = set()  # take these, but reply only after the client has given up waiting
        self.late_seconds = 0.0
        self.attempts = 0

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in self.drop_at_rcpt:
            server.transport.abort()
            return "421 4.3.0 gone"
        return await super().handle_RCPT(server, session, envelope, address, rcpt_options)

    async def handle_DATA(self, server, session, envelope):
        self.attempts += 1
        if self.data_reply_from and self.attempts > self.data_reply_from[0]:
            return self.data_reply_from[1]
        self.messages.append(email.message_from_bytes(envelope.content, policy=policy.default))
        if set(envelope.rcpt_tos) & self.late_for:
            await asyncio.sleep(self.late_seconds)  # taken, but the reply comes after the client stopped waiting
        return "250 Message accepted for delivery"


@pytest.fixture
def relay(settings):
    recorder = ScriptedRelay()
    controller = Controller(recorder, hostname="127.0.0.1", port=free_port())
    controller.start()
    recorder.port = controller.port
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", controller.port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_TIMEOUT = 1
    recorder.late_seconds = settings.EMAIL_TIMEOUT + 1.5
    try:
        yield recorder
    finally:
        controller.stop()
