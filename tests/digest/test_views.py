"""Subscribe, confirm, manage and unsubscribe pages; double opt-in, no enumeration, rate limits, signed links."""

import re
import time
from unittest import mock

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone

from digest.models import Subscription
from digest.tokens import (
    SubscribeRequest,
    confirm_token_make,
    manage_token_make,
    unsubscribe_token_make,
)
from tests.digest.conftest import subscriber

pytestmark = pytest.mark.django_db
SUBSCRIBE = "/digest/subscribe/?gpu=h100&mig=yes&page=2"


def _subscribe(client, email="ann@example.org", url=SUBSCRIBE, **extra):
    return client.post(url, {"email": email, "language": "en", **extra})


def _page(response) -> str:
    """The page without its per-response CSRF token (the site's language form carries one)."""
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", response.content.decode())


def _confirm_path(message) -> str:
    # SITE_URL is unset in tests: a confirmation sent while answering a request links to the host it was served on.
    return re.search(r"http://testserver(/digest/confirm/[^/\s]+/)", message.body).group(1)


def test_the_subscribe_page_shows_the_filter_it_will_save(world, client):
    page = client.get(SUBSCRIBE).content.decode()
    assert "NVIDIA H100" in page or "H100" in page
    assert "MIG" in page and "disabled" not in page


def test_an_invalid_filter_is_explained_and_nothing_typed_is_lost(world, client):
    response = _subscribe(client, url="/digest/subscribe/?gpu=nope")
    assert response.status_code == 400
    assert "ann@example.org" in response.content.decode() and "gpu" in response.content.decode()
    assert not mail.outbox


def test_subscribing_sends_a_confirmation_and_stores_nothing_until_confirmed(world, client):
    response = _subscribe(client)
    assert response.status_code == 200 and "Check your inbox" in response.content.decode()
    (message,) = mail.outbox
    assert message.to == ["ann@example.org"] and message.alternatives[0][1] == "text/html"
    assert not Subscription.objects.exists()

    path = _confirm_path(message)
    assert client.get(path).status_code == 200 and not Subscription.objects.exists()  # a link scanner's GET
    response = client.post(path)
    assert response.status_code == 302 and "/digest/manage/" in response["Location"]
    subscription = Subscription.objects.get()
    assert (subscription.email, subscription.filter_query, subscription.status) == (
        "ann@example.org", "gpu=h100&mig=yes", "active")
    client.post(path)  # confirming twice is harmless
    assert Subscription.objects.count() == 1


def test_the_answer_is_the_same_whether_or_not_the_address_is_subscribed(world, client):
    subscriber("known@example.org", query="gpu=h100")
    known = _subscribe(client, email="known@example.org")
    unknown = _subscribe(client, email="new@example.org")
    assert known.status_code == unknown.status_code == 200
    assert _page(known) == _page(unknown)
    assert len(mail.outbox) == 2


def test_too_many_requests_from_one_ip_get_429_and_keep_what_was_typed(world, client, settings):
    settings.DIGEST_SUBSCRIBE_RATE_PER_IP = 2
    for index in range(2):
        assert _subscribe(client, email=f"p{index}@example.org").status_code == 200
    refused = _subscribe(client, email="third@example.org")
    assert refused.status_code == 429 and "third@example.org" in refused.content.decode()
    assert len(mail.outbox) == 2


def test_one_address_gets_a_bounded_number_of_confirmations_with_an_unchanged_answer(world, settings):
    settings.DIGEST_SUBSCRIBE_RATE_PER_ADDRESS = 1
    first = _subscribe(Client(REMOTE_ADDR="10.0.0.1"))
    second = _subscribe(Client(REMOTE_ADDR="10.0.0.2"))
    assert _page(first) == _page(second) and len(mail.outbox) == 1


def test_a_relay_failure_on_subscribe_leaves_the_request_answered_and_the_worker_retrying(world, client, settings):
    from tests.digest.conftest import free_port

    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", free_port(), 2
    with mock.patch("digest.tasks.confirmation_send.retry", side_effect=RuntimeError("retry later")) as retry:
        response = _subscribe(client)
    assert response.status_code == 200  # the web request only queued the email
    assert retry.call_count == 1 and "ConfirmationNotSent" in repr(retry.call_args)


def test_a_broker_outage_on_subscribe_is_explained_and_keeps_the_form(world, client):
    from kombu.exceptions import OperationalError

    with mock.patch("digest.tasks.confirmation_send.delay", side_effect=OperationalError("connection refused")):
        response = _subscribe(client)
    assert response.status_code == 503 and "ann@example.org" in response.content.decode()
    assert not mail.outbox


def _token(**changes):
    request = dict(email="ann@example.org", filter_query="gpu=h100", language="zh-hans", always_send=False,
                   issued_at=time.time())
    request.update(changes)
    return confirm_token_make(SubscribeRequest(**request))


def test_a_tampered_confirmation_link_is_refused(world, client):
    token = _token()
    tampered = token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB")
    for bad in (tampered, "nonsense", manage_token_make(subscriber("x@example.org").key)):
        response = client.post(f"/digest/confirm/{bad}/")
        assert response.status_code == 400
    assert Subscription.objects.count() == 1


def test_an_expired_confirmation_link_is_refused_and_offers_the_same_filter_again(world, client, settings):
    with mock.patch("django.core.signing.time.time", return_value=time.time() - settings.DIGEST_CONFIRM_MAX_AGE - 5):
        token = _token()
    response = client.post(f"/digest/confirm/{token}/")
    assert response.status_code == 410 and "/digest/subscribe/?gpu=h100" in response.content.decode()
    assert not Subscription.objects.exists()


def test_a_confirmation_link_issued_before_unsubscribing_does_not_resubscribe(world, client):
    token = _token(issued_at=time.time() - 60)
    Subscription.objects.filter(pk=subscriber("ann@example.org", status="unsubscribed").pk).update(
        unsubscribed_at=timezone.now())
    assert client.post(f"/digest/confirm/{token}/").status_code == 410
    assert Subscription.objects.get().status == "unsubscribed"


def test_the_manage_page_changes_filter_language_and_pauses(world, client):
    subscription = subscriber("ann@example.org", query="gpu=h100")
    url = f"/digest/manage/{manage_token_make(subscription.key)}/"
    assert client.get(url).status_code == 200
    response = client.post(url, {"action": "save", "language": "zh-hans", "always_send": "on",
                                 "gpu": ["a100-80gb", "h100"], "price_per_gpu_hour_max": "3.00"})
    assert response.status_code == 302
    subscription.refresh_from_db()
    assert (subscription.filter_query, subscription.language, subscription.always_send) == (
        "gpu=a100-80gb,h100&price_per_gpu_hour_max=3", "zh-hans", True)

    client.post(url, {"action": "pause"})
    subscription.refresh_from_db()
    assert subscription.status == "paused"
    client.post(url, {"action": "resume"})
    subscription.refresh_from_db()
    assert subscription.status == "active"


def test_an_invalid_filter_on_the_manage_page_changes_nothing(world, client):
    subscription = subscriber("ann@example.org", query="gpu=h100")
    url = f"/digest/manage/{manage_token_make(subscription.key)}/"
    response = client.post(url, {"action": "save", "language": "en", "gpu": "nope"})
    assert response.status_code == 400
    subscription.refresh_from_db()
    assert subscription.filter_query == "gpu=h100"


def test_a_tampered_manage_link_is_refused(world, client):
    subscription = subscriber("ann@example.org")
    token = manage_token_make(subscription.key)
    assert client.get(f"/digest/manage/{token[:-1]}x/").status_code == 400
    assert client.get(f"/digest/manage/{unsubscribe_token_make(subscription.key)}/").status_code == 400


def test_one_click_unsubscribe_works_without_a_session_or_csrf_token(world):
    subscription = subscriber("ann@example.org")
    client = Client(enforce_csrf_checks=True)
    url = f"/digest/unsubscribe/{unsubscribe_token_make(subscription.key)}/"
    assert client.get(url).status_code == 200
    subscription.refresh_from_db()
    assert subscription.status == "active"  # showing the page changes nothing
    response = client.post(url, "List-Unsubscribe=One-Click", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 200
    subscription.refresh_from_db()
    assert subscription.status == "unsubscribed" and subscription.unsubscribed_at is not None


def test_the_preview_is_for_staff_only(world, client, admin_client):
    assert client.get("/digest/preview/?gpu=h100").status_code == 302
    response = admin_client.get("/digest/preview/?gpu=h100&language=zh-hans")
    assert response.status_code == 200 and "GPU 周报" in response.content.decode()


def test_the_preview_alone_lets_the_email_html_use_inline_styles(world, client, admin_client, settings):
    settings.SECURITY_HEADERS = True  # as in production
    preview = admin_client.get("/digest/preview/?gpu=h100")["Content-Security-Policy"]
    page = client.get(SUBSCRIBE)["Content-Security-Policy"]
    assert "style-src 'self' 'unsafe-inline';" in preview and "script-src 'self';" in preview
    assert "style-src 'self';" in page and "unsafe" not in page


def _subscribe_from(client, email, forwarded_for) -> int:
    return client.post(SUBSCRIBE, {"email": email, "language": "en"}, HTTP_X_FORWARDED_FOR=forwarded_for).status_code


def test_behind_a_configured_proxy_the_per_ip_limit_counts_each_client_not_the_site(world, settings):
    settings.DIGEST_SUBSCRIBE_RATE_PER_IP, settings.NUM_PROXIES = 2, 1
    proxy = Client(REMOTE_ADDR="10.0.0.9")  # every request arrives from the ingress
    first = [_subscribe_from(proxy, f"a{n}@example.org", "198.51.100.1") for n in range(3)]
    other = _subscribe_from(proxy, "b@example.org", "198.51.100.2")
    assert first == [200, 200, 429] and other == 200


def test_without_a_proxy_count_an_invented_x_forwarded_for_is_ignored(world, settings):
    settings.DIGEST_SUBSCRIBE_RATE_PER_IP = 2
    client = Client(REMOTE_ADDR="10.0.0.9")
    codes = [_subscribe_from(client, f"c{n}@example.org", f"203.0.113.{n}") for n in range(3)]
    assert codes == [200, 200, 429]


def test_an_old_confirmation_link_does_not_resume_a_paused_subscription(world, client):
    token = _token(issued_at=time.time() - 60, filter_query="gpu=a100-80gb")
    subscription = subscriber("ann@example.org", query="gpu=h100")
    client.post(f"/digest/manage/{manage_token_make(subscription.key)}/", {"action": "pause"})
    assert client.post(f"/digest/confirm/{token}/").status_code < 500
    subscription.refresh_from_db()
    assert subscription.status == "paused" and subscription.filter_query == "gpu=h100"
    # A link asked for after the pause is a new opt-in, and resumes it.
    client.post(f"/digest/confirm/{_token(issued_at=time.time() + 1)}/")
    subscription.refresh_from_db()
    assert subscription.status == "active"


def test_an_old_confirmation_link_does_not_reapply_its_filters_over_a_later_change(world, client):
    old = _token(issued_at=time.time() - 2 * 24 * 3600, filter_query="gpu=a100-80gb", language="en")
    subscription = subscriber("ann@example.org", query="gpu=a100-80gb")
    response = client.post(f"/digest/manage/{manage_token_make(subscription.key)}/",
                           {"gpu": "h100", "language": "zh-hans", "action": "save"})
    assert response.status_code < 400
    subscription.refresh_from_db()
    assert subscription.filter_query == "gpu=h100"
    client.post(f"/digest/confirm/{old}/")
    subscription.refresh_from_db()
    assert (subscription.filter_query, subscription.language, subscription.status) == ("gpu=h100", "zh-hans",
                                                                                     "active")
