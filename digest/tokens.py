"""Signed links. Confirmation links carry the whole subscription request and expire
(settings.DIGEST_CONFIRM_MAX_AGE); manage and unsubscribe links carry the subscription's random key and do not
expire, because an unsubscribe link in a months-old email must still work (RFC 8058). Every link is signed with
SECRET_KEY under its own salt, so one kind of token is never accepted as another and a changed character is refused.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from django.conf import settings
from django.core import signing

CONFIRM_SALT = "comparator.digest.confirm"
MANAGE_SALT = "comparator.digest.manage"
UNSUBSCRIBE_SALT = "comparator.digest.unsubscribe"


class TokenInvalid(Exception):
    """The link was altered, truncated or made for something else."""


class TokenExpired(Exception):
    """A genuine confirmation link that is too old; `request` is what it asked for, to offer it again."""

    def __init__(self, request: SubscribeRequest):
        super().__init__("confirmation link expired")
        self.request = request


@dataclass(frozen=True)
class SubscribeRequest:
    email: str
    filter_query: str
    language: str
    always_send: bool
    issued_at: float


def confirm_token_make(request: SubscribeRequest) -> str:
    payload = {"e": request.email, "f": request.filter_query, "l": request.language, "a": request.always_send,
               "t": request.issued_at}
    return signing.dumps(payload, salt=CONFIRM_SALT, compress=True)


def _request(payload) -> SubscribeRequest:
    try:
        return SubscribeRequest(email=payload["e"], filter_query=payload["f"], language=payload["l"],
                                always_send=bool(payload["a"]), issued_at=float(payload["t"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise TokenInvalid("malformed confirmation payload") from exc


def confirm_token_read(token: str) -> SubscribeRequest:
    try:
        return _request(signing.loads(token, salt=CONFIRM_SALT, max_age=settings.DIGEST_CONFIRM_MAX_AGE))
    except signing.SignatureExpired:
        raise TokenExpired(_request(signing.loads(token, salt=CONFIRM_SALT))) from None
    except signing.BadSignature as exc:
        raise TokenInvalid(str(exc)) from exc


def now_timestamp() -> float:
    return time.time()


def manage_token_make(key: uuid.UUID) -> str:
    return signing.Signer(salt=MANAGE_SALT).sign(key.hex)


def unsubscribe_token_make(key: uuid.UUID) -> str:
    return signing.Signer(salt=UNSUBSCRIBE_SALT).sign(key.hex)


def _key(token: str, salt: str) -> uuid.UUID:
    try:
        return uuid.UUID(hex=signing.Signer(salt=salt).unsign(token))
    except (signing.BadSignature, ValueError) as exc:
        raise TokenInvalid(str(exc)) from exc


def manage_token_read(token: str) -> uuid.UUID:
    return _key(token, MANAGE_SALT)


def unsubscribe_token_read(token: str) -> uuid.UUID:
    return _key(token, UNSUBSCRIBE_SALT)
