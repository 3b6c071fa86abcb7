"""Display options of the pages (not filters): the currency prices are shown in, at the latest ECB rate we hold,
and whether prices are per GPU-hour or per instance-hour."""

from __future__ import annotations

import logging

from django import forms
from django.utils.formats import date_format
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from providers import selectors

from .currency import DISPLAY_CURRENCIES, Conversion, conversions

logger = logging.getLogger(__name__)


# --- display options (not filters) ------------------------------------------------------------------------------


class OptionSelect(forms.Select):
    """A select whose options listed in `disabled_values` cannot be chosen (a currency with no rate loaded)."""

    disabled_values: frozenset[str] = frozenset()

    def create_option(self, name, value, *args, **kwargs):
        option = super().create_option(name, value, *args, **kwargs)
        if str(value) in self.disabled_values:
            option["attrs"]["disabled"] = True
        return option


UNITS = (("gpu", _("per GPU-hour")), ("instance", _("per instance-hour")))
# A month of cost is 730 hours (8,760 a year / 12), as the providers' own monthly figures count it.
HOURS_PER_MONTH = 730
PERIODS = (("hour", _("per hour")), ("month", _("per month (730 hours)")))


class DisplayForm(forms.Form):
    currency = forms.ChoiceField(label=_("Currency"), required=False, widget=OptionSelect)
    unit = forms.ChoiceField(label=_("Price"), required=False, choices=UNITS, widget=forms.RadioSelect)
    period = forms.ChoiceField(label=_("Cost"), required=False, choices=PERIODS,
                               widget=forms.RadioSelect)

    def __init__(self, data, *, rates: dict[str, Conversion]):
        # Absent options mean the defaults, so the radio buttons and the select always show what is displayed.
        chosen = {key: data.get(key) for key in ("currency", "unit", "period") if data.get(key)}
        data = {"currency": "USD", "unit": "gpu", "period": "hour", **chosen}
        super().__init__(data)
        self.rates = rates
        choices = []
        for code in DISPLAY_CURRENCIES:
            conversion = rates[code]
            if code == "USD":
                label = "USD"
            elif conversion.available:
                label = gettext("%(code)s (ECB rate of %(date)s)") % {
                    "code": code, "date": date_format(conversion.rate_date, "SHORT_DATE_FORMAT")}
            else:
                label = gettext("%(code)s: no exchange rate loaded") % {"code": code}
            choices.append((code, label))
        self.fields["currency"].choices = choices
        self.fields["currency"].widget.disabled_values = frozenset(
            code for code in DISPLAY_CURRENCIES if not rates[code].available)

    def clean_currency(self):
        code = self.cleaned_data.get("currency") or "USD"
        if not self.rates[code].available:
            raise forms.ValidationError(
                _("No %(code)s exchange rate is loaded yet, so prices are shown in USD."), params={"code": code})
        return code

    def conversion(self) -> Conversion:
        code = self.cleaned_data.get("currency") if self.is_valid() else None
        return self.rates[code or "USD"]

    def unit_value(self) -> str:
        unit = self.data.get("unit")
        return unit if unit in dict(UNITS) else "gpu"

    def period_value(self) -> str:
        """"hour" (the default) or "month": prices shown per hour, or times HOURS_PER_MONTH (display only; the
        filters and the API stay per hour)."""
        period = self.data.get("period")
        return period if period in dict(PERIODS) else "hour"


def display_conversions() -> dict[str, Conversion]:
    rate_date, per_eur = selectors.exchange_rates_day()
    return conversions(per_eur, rate_date)


# --- GPU names and form factors in the page's language ----------------------------------------------------------

FORM_FACTORS = {"unspecified": _("not stated"), "superchip": _("superchip")}


def form_factor(value: str) -> str:
    return str(FORM_FACTORS.get(value, value))
