"""One email through one SMTP transaction, its outcome named by the step it ended at (docs/operations.md, "Mail").

SMTP tells a refused address from a refused message only by when the refusal comes: a 5xx to RCPT TO is about that
address; a reply to DATA or to the end of the message is about the message or the relay (content policy, quota,
an outage), and says nothing about the address. So the transaction is driven step by step here instead of through
smtplib's `sendmail`, which reports a refused message and a refused address alike:

- RecipientRefused: 5xx to RCPT TO. The only outcome that marks an address undeliverable.
- RecipientDeferred: 4xx to RCPT TO (421 excepted: that is the server closing). Try this address again later.
- RelayFailure: anything else before the end of the message was sent, or a refusal after it (4xx or 5xx to DATA or
  to the final dot), or a dropped connection. Nothing was accepted; the rest of the batch waits for a retry.
- OutcomeUnknown: the whole message went out and no reply came (timeout or dropped connection). The server may
  have taken it: never sent again automatically.

Backends other than SMTP (console in development, locmem in tests) are sent through as they are.
"""

from __future__ import annotations

import re
import smtplib

from django.conf import settings
from django.core.mail import EmailMessage
from django.core.mail.backends.smtp import EmailBackend as SmtpBackend
from django.core.mail.message import sanitize_address


class SendFailure(Exception):
    def __init__(self, reply: str, code: int | None = None):
        super().__init__(f"{code} {reply}" if code else reply)
        self.code = code


class RecipientRefused(SendFailure):
    """5xx to RCPT TO: the relay says this address does not exist or will never take mail."""


class RecipientDeferred(SendFailure):
    """4xx to RCPT TO: this address cannot take mail just now."""


class RelayFailure(SendFailure):
    """The relay refused the message or the session, or the connection was lost before the message was complete."""


class OutcomeUnknown(SendFailure):
    """The message was sent in full and no reply came: it may or may not have been accepted."""


_LEADING_DOT = re.compile(rb"(?m)^\.")


def _reply(code: int, text: bytes) -> str:
    return f"{code} {text.decode('utf-8', 'replace')}"


def email_deliver(*, connection, message: EmailMessage) -> None:
    """Send `message` (one recipient) over `connection` (an open Django mail backend); raise a SendFailure."""
    if not isinstance(connection, SmtpBackend):
        _deliver_other(connection, message)
        return
    smtp = connection.connection
    encoding = message.encoding or settings.DEFAULT_CHARSET
    sender = sanitize_address(message.from_email, encoding)
    (recipient,) = [sanitize_address(address, encoding) for address in message.recipients()]
    content = _LEADING_DOT.sub(b"..", message.message().as_bytes(linesep="\r\n"))
    if not content.endswith(b"\r\n"):
        content += b"\r\n"
    try:
        smtp.ehlo_or_helo_if_needed()
        code, text = smtp.mail(sender)
        if code != 250:
            raise RelayFailure(f"MAIL FROM: {_reply(code, text)}", code)
        code, text = smtp.rcpt(recipient)
        if code not in (250, 251):
            if code == 421 or not 400 <= code < 600:
                raise RelayFailure(f"RCPT TO: {_reply(code, text)}", code)
            smtp.rset()
            raise (RecipientRefused if code >= 500 else RecipientDeferred)(f"RCPT TO: {_reply(code, text)}", code)
        smtp.putcmd("data")
        code, text = smtp.getreply()
        if code != 354:
            raise RelayFailure(f"DATA: {_reply(code, text)}", code)
        smtp.send(content + b".\r\n")
    except SendFailure:
        raise
    except (smtplib.SMTPException, OSError) as exc:
        raise RelayFailure(f"connection lost before the message was complete: {type(exc).__name__}: {exc}") from exc
    try:
        code, text = smtp.getreply()
    except (smtplib.SMTPException, OSError) as exc:
        raise OutcomeUnknown(f"no reply after the message was sent: {type(exc).__name__}: {exc}") from exc
    if code != 250:
        raise RelayFailure(f"end of message: {_reply(code, text)}", code)


def _deliver_other(connection, message: EmailMessage) -> None:
    try:
        connection.send_messages([message])
    except smtplib.SMTPRecipientsRefused as exc:
        code = min(code for code, _text in exc.recipients.values())
        raise (RecipientRefused if code >= 500 else RecipientDeferred)(str(exc), code) from exc
    except (smtplib.SMTPException, OSError) as exc:
        raise RelayFailure(f"{type(exc).__name__}: {exc}") from exc
