"""Rendering of the digest and confirmation emails from their templates (subject, text and HTML: one set under
templates/digest/email/, rendered in the subscriber's language; its words are translated through the catalogue like
the pages', and names, stock states and capability answers are the site's own, see templatetags/digest_format.py).

A digest is rendered once per (saved filter, language) with unguessable placeholders where each subscriber's
manage and unsubscribe links go; `digest_message` swaps in one subscriber's signed links. Rendering therefore costs
per distinct filter and language, not per subscriber, and escaping is done by the template engine before any
substitution (the links are URL-safe: signed tokens use only letters, digits, ':', '_' and '-').
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation

from .models import Subscription
from .savedfilters import saved_filter_summary
from .selectors import Digest
from .tokens import manage_token_make, unsubscribe_token_make

logger = logging.getLogger(__name__)


def site_base(request=None) -> str:
    """The origin links in emails start with: SITE_URL when set; else the address the request being answered was
    served on (scheme and Host, as ALLOWED_HOSTS vetted it); else, outside any request, LOCAL_SITE_URL."""
    if settings.SITE_URL:
        return settings.SITE_URL.rstrip("/")
    if request is not None:
        return f"{request.scheme}://{request.get_host()}"
    logger.warning("SITE_URL is not set: email links point to %s", settings.LOCAL_SITE_URL)
    return settings.LOCAL_SITE_URL.rstrip("/")


def site_url(path: str, *, base: str = "") -> str:
    return (base or site_base()) + path


def offers_url(query: str, *, base: str = "") -> str:
    return site_url(reverse("home"), base=base) + (f"?{query}" if query else "")


def manage_url(subscription: Subscription, *, base: str = "") -> str:
    return site_url(reverse("digest:manage", args=[manage_token_make(subscription.key)]), base=base)


def unsubscribe_url(subscription: Subscription, *, base: str = "") -> str:
    return site_url(reverse("digest:unsubscribe", args=[unsubscribe_token_make(subscription.key)]), base=base)


def _render(name: str, language: str, context: dict) -> tuple[str, str, str]:
    with translation.override(language):
        subject = render_to_string(f"digest/email/{name}_subject.txt", context)
        text = render_to_string(f"digest/email/{name}.txt", context)
        html = render_to_string(f"digest/email/{name}.html", context)
    return " ".join(subject.split()), text, html


@dataclass(frozen=True)
class RenderedDigest:
    subject: str
    text: str
    html: str
    manage_placeholder: str
    unsubscribe_placeholder: str


def digest_render(digest: Digest, *, language: str, base: str = "") -> RenderedDigest:
    base = base or site_base()
    nonce = secrets.token_hex(8)
    manage, unsubscribe = f"digest-{nonce}-manage", f"digest-{nonce}-unsubscribe"
    with translation.override(language):  # the links too: a Chinese digest links to the Chinese pages (/zh-hans/)
        context = {
            "digest": digest,
            "summary": saved_filter_summary(digest.query),
            "offers_url": offers_url(digest.query, base=base),
            "site_url": site_url(reverse("home"), base=base),
            "site_base": base,
            "threshold": settings.DIGEST_PRICE_CHANGE_THRESHOLD,
            "manage_url": manage,
            "unsubscribe_url": unsubscribe,
        }
    subject, text, html = _render("digest", language, context)
    return RenderedDigest(subject, text, html, manage, unsubscribe)


def message_id(subscription: Subscription, week_key) -> str:
    """The same id for a subscriber's digest of a week however often it is built, so a receiving system can tell a
    re-delivery after a crash from a new message."""
    domain = urlsplit(settings.SITE_URL or settings.LOCAL_SITE_URL).hostname or "localhost"
    return f"<digest.{week_key:%Y%m%d}.{subscription.key.hex}@{domain}>"


def digest_message(rendered: RenderedDigest, *, subscription: Subscription, week_key, connection=None
                   ) -> EmailMultiAlternatives:
    with translation.override(subscription.language):
        manage, unsubscribe = manage_url(subscription), unsubscribe_url(subscription)

    def personal(body: str) -> str:
        return body.replace(rendered.manage_placeholder, manage).replace(rendered.unsubscribe_placeholder, unsubscribe)

    message = EmailMultiAlternatives(
        subject=rendered.subject,
        body=personal(rendered.text),
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[subscription.email],
        connection=connection,
        headers={
            # RFC 2369 and RFC 8058: mail clients show an unsubscribe button that POSTs to this URL, no page needed.
            "List-Unsubscribe": f"<{unsubscribe}>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
            "Message-ID": message_id(subscription, week_key),
        },
    )
    message.attach_alternative(personal(rendered.html), "text/html")
    return message


def confirmation_message(*, email: str, language: str, confirm_url: str, filter_query: str,
                         already_subscribed: bool, base: str = "") -> EmailMultiAlternatives:
    with translation.override(language):
        summary = saved_filter_summary(filter_query)
        links = offers_url(filter_query, base=base)
    context = {
        "confirm_url": confirm_url,
        "summary": summary,
        "offers_url": links,
        "already_subscribed": already_subscribed,
        "max_age_days": settings.DIGEST_CONFIRM_MAX_AGE // 86400,
    }
    subject, text, html = _render("confirm", language, context)
    message = EmailMultiAlternatives(subject=subject, body=text, from_email=settings.DEFAULT_FROM_EMAIL, to=[email])
    message.attach_alternative(html, "text/html")
    return message
