"""Digest pages: subscribe, confirm, manage, unsubscribe (with RFC 8058 one-click), and the staff preview.

Each view parses the request, calls one service or selector and renders. Links in emails only ever show a page
on GET; anything that changes a subscription needs a POST, so mail scanners that follow links change nothing.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.dates import WEEKDAYS
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from providers.filters import OfferFilterSet
from providers.limits import client_ip
from providers.models import Offer

from . import selectors, services
from .emails import digest_render, offers_url, site_base
from .forms import FORM_PARAMS, ManageForm, SubscribeForm
from .models import Language, SubscriptionStatus
from .savedfilters import saved_filter_parse, saved_filter_summary
from .tokens import TokenExpired, TokenInvalid, confirm_token_read, manage_token_make
from .weeks import trailing_week


def _subscribe_url(query: str) -> str:
    return reverse("digest:subscribe") + (f"?{query}" if query else "")


def _filter_form(data: QueryDict):
    form = OfferFilterSet(data, queryset=Offer.objects.none()).form
    form.fields.pop("ordering", None)  # presentation only; never part of a saved filter
    if data:
        form.is_valid()
    return form


def _link_problem(request: HttpRequest, message: str, *, status: int, retry_query: str | None = None):
    context = {"message": message,
               "subscribe_url": _subscribe_url(retry_query) if retry_query is not None else None}
    return render(request, "digest/link_problem.html", context, status=status)


def _default_language(request: HttpRequest) -> str:
    return Language.CHINESE if (request.LANGUAGE_CODE or "").startswith("zh") else Language.ENGLISH


@require_http_methods(["GET", "HEAD"])
def index(request: HttpRequest) -> HttpResponse:
    """/digest/: what the weekly digest sends, how to subscribe with the offers page's filters, how to leave."""
    return render(request, "digest/index.html", {
        "weekday": WEEKDAYS[(settings.DIGEST_SEND_WEEKDAY - 1) % 7], "hour": f"{settings.DIGEST_SEND_HOUR:02d}:00",
        "threshold_percent": round(settings.DIGEST_PRICE_CHANGE_THRESHOLD * 100),
        "cheapest": settings.DIGEST_CHEAPEST_COUNT,
    })


@require_http_methods(["GET", "POST"])
def subscribe(request: HttpRequest) -> HttpResponse:
    """The filter is the page's query string (the offers page links here with its current filters); the form
    posts back to the same URL, so the filter travels with it and nothing typed is lost on an error."""
    parsed = saved_filter_parse(request.GET, other_params=FORM_PARAMS)
    status, problem = 200, ""
    if request.method == "POST":
        form = SubscribeForm(request.POST)
        if form.is_valid() and parsed.is_valid:
            data = form.cleaned_data
            try:
                services.subscription_request(email=data["email"], filter_query=parsed.query,
                                              language=data["language"], always_send=data["always_send"],
                                              ip=client_ip(request), base=site_base(request))
            except services.RateLimited:
                status, problem = 429, _("Too many subscription requests from your network. Please try again in "
                                         "an hour; what you typed is kept below.")
            except services.ConfirmationNotSent:
                status, problem = 503, _("We could not send the confirmation email just now. Please try again in "
                                         "a few minutes; what you typed is kept below.")
            else:
                # The same page whether or not the address is already subscribed: no address enumeration.
                context = {"limit": settings.DIGEST_SUBSCRIBE_RATE_PER_ADDRESS,
                           "offers_url": offers_url(parsed.query, base=site_base(request))}
                return render(request, "digest/subscribe_sent.html", context)
        else:
            status = 400
    else:
        form = SubscribeForm(initial={"language": _default_language(request)})
    return render(request, "digest/subscribe.html", {
        "form": form, "parsed": parsed, "problem": problem,
        "summary": saved_filter_summary(parsed.query) if parsed.is_valid else [],
        "offers_url": offers_url(parsed.query if parsed.is_valid else "", base=site_base(request)),
    }, status=status)


@require_http_methods(["GET", "POST"])
def confirm(request: HttpRequest, token: str) -> HttpResponse:
    try:
        subscribe_request = confirm_token_read(token)
    except TokenExpired as exc:
        return _link_problem(request, _("This confirmation link has expired. Please subscribe again."),
                             status=410, retry_query=exc.request.filter_query)
    except TokenInvalid:
        return _link_problem(request, _("This confirmation link is not valid. Was it cut or changed? Please copy "
                                        "the whole link from the email, or subscribe again."), status=400)
    if request.method == "POST":
        try:
            subscription = services.subscription_confirm(token=token)
        except services.LinkSuperseded:
            return _link_problem(request, _("This address unsubscribed after this link was sent, so the link no "
                                            "longer subscribes it. Please subscribe again."),
                                 status=410, retry_query=subscribe_request.filter_query)
        except services.FilterNoLongerValid as exc:
            return _link_problem(request, _("The saved filter no longer matches our catalog: %(errors)s. Please "
                                            "choose the filter again.") % {"errors": exc},
                                 status=400, retry_query="")
        return redirect(reverse("digest:manage", args=[manage_token_make(subscription.key)]) + "?confirmed=1")
    return render(request, "digest/confirm.html", {
        "email": subscribe_request.email,
        "summary": saved_filter_summary(subscribe_request.filter_query),
        "language": dict(Language.choices).get(subscribe_request.language, subscribe_request.language),
    })


@require_http_methods(["GET", "POST"])
def manage(request: HttpRequest, token: str) -> HttpResponse:
    try:
        subscription = selectors.subscription_from_manage_token(token)
    except TokenInvalid:
        return _link_problem(request, _("This link is not valid. Please use the link from your latest digest."),
                             status=400)
    if subscription is None:
        return _link_problem(request, _("This subscription no longer exists."), status=404, retry_query="")
    status = 200
    form = ManageForm(initial={"language": subscription.language, "always_send": subscription.always_send})
    filter_data = QueryDict(subscription.filter_query)
    parsed = None
    if request.method == "POST":
        action = request.POST.get("action", "save")
        if action == "unsubscribe":
            services.subscription_unsubscribe(subscription=subscription)
            return render(request, "digest/unsubscribed.html",
                          {"subscribe_url": _subscribe_url(subscription.filter_query)})
        if action in ("pause", "resume"):
            services.subscription_pause(subscription=subscription, paused=action == "pause")
            return redirect(request.path + "?saved=1")
        form = ManageForm(request.POST)
        filter_data = request.POST
        parsed = saved_filter_parse(request.POST, other_params=FORM_PARAMS)
        if form.is_valid() and parsed.is_valid:
            services.subscription_update(subscription=subscription, filter_query=parsed.query,
                                         language=form.cleaned_data["language"],
                                         always_send=form.cleaned_data["always_send"])
            return redirect(request.path + "?saved=1")
        status = 400
    return render(request, "digest/manage.html", {
        "subscription": subscription, "form": form, "filter_form": _filter_form(filter_data), "parsed": parsed,
        "summary": saved_filter_summary(subscription.filter_query),
        "offers_url": offers_url(subscription.filter_query, base=site_base(request)),
        "subscribe_url": _subscribe_url(subscription.filter_query),
        "confirmed": "confirmed" in request.GET, "saved": "saved" in request.GET,
        "statuses": SubscriptionStatus,
    }, status=status)


@csrf_exempt  # RFC 8058: mail clients POST "List-Unsubscribe=One-Click" with no cookie; the signed token suffices
@require_http_methods(["GET", "POST"])
def unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    try:
        subscription = selectors.subscription_from_unsubscribe_token(token)
    except TokenInvalid:
        return _link_problem(request, _("This unsubscribe link is not valid. Please use the link from your latest "
                                        "digest."), status=400)
    if subscription is None:
        return _link_problem(request, _("This subscription no longer exists."), status=404)
    if request.method == "POST":
        services.subscription_unsubscribe(subscription=subscription)
        return render(request, "digest/unsubscribed.html",
                      {"subscribe_url": _subscribe_url(subscription.filter_query)})
    return render(request, "digest/unsubscribe.html", {"subscription": subscription})


@staff_member_required
def preview(request: HttpRequest) -> HttpResponse:
    """This week's digest (the 7 days up to now) for any filter and language, as its subscribers would get it."""
    language = request.GET.get("language")
    if language not in dict(Language.choices):
        language = Language.ENGLISH
    parsed = saved_filter_parse(request.GET, other_params=frozenset({"language"}))
    context = {"parsed": parsed, "filter_form": _filter_form(request.GET), "language": language,
               "language_choices": Language.choices}
    if parsed.is_valid:
        changes = selectors.week_changes(week=trailing_week(timezone.now()))
        digest = selectors.digest_build(query=parsed.query, changes=changes)
        rendered = digest_render(digest, language=language, base=site_base(request))
        context.update({
            "digest": digest,
            "subject": rendered.subject,
            "html": rendered.html.replace(rendered.manage_placeholder, "#manage")
            .replace(rendered.unsubscribe_placeholder, "#unsubscribe"),
            "text": rendered.text.replace(rendered.manage_placeholder, "(manage link)")
            .replace(rendered.unsubscribe_placeholder, "(unsubscribe link)"),
        })
    response = render(request, "digest/preview.html", context)
    # The email's HTML is shown in a sandboxed srcdoc iframe, which inherits this page's policy; email clients need
    # inline styles, so this staff page alone allows them (the site's headers middleware, comparator.security).
    response.shows_email_html = True
    return response
