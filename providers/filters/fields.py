"""What each offer filter accepts: the form fields and widgets behind providers.filters (how a value is read from a
query string, and the error that names what is wrong with it), and the filters' form, which checks what one field
alone cannot (a GPU-count range that can match nothing). Every error is a 400 naming the parameter and the value."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import cache
from pathlib import Path

from django import forms
from django.utils.choices import CallableChoiceIterator
from django.utils.translation import gettext_lazy as _
from django_filters.fields import BaseCSVField, ChoiceField
from django_filters.widgets import BaseCSVWidget

from nodesoftware import compat as node_compat

from .fabric import RDMA_RENAMED

MAX_LISTED_CHOICES = 30


def invalid_choice(value, accepted) -> forms.ValidationError:
    """An unknown choice's error names the accepted values (a catalog's long slug list is pointed to instead)."""
    accepted = sorted(str(item) for item in accepted if str(item))
    if len(accepted) > MAX_LISTED_CHOICES:
        return forms.ValidationError(
            _("%(value)s is not an accepted value; the accepted values are the slugs the API lists (/api/v1/gpus/, "
              "/api/v1/providers/)."), code="invalid_choice", params={"value": value})
    return forms.ValidationError(_("%(value)s is not an accepted value; accepted: %(accepted)s."),
                                 code="invalid_choice", params={"value": value, "accepted": ", ".join(accepted)})


EMPTY_ITEM = _("Empty item in the comma-separated list; remove the extra comma.")


class CommaMultipleChoiceField(forms.MultipleChoiceField):
    """Accepts `?x=a&x=b` and `?x=a,b` alike. An empty item in a list (`?gpu=h100-sxm,`, `?gpu=,`) is an error, as
    in the ordering; a parameter left empty (`?gpu=`) is no filter."""

    def to_python(self, value):
        values = super().to_python([value] if isinstance(value, str) else value)
        parts = [part.strip() for item in values for part in str(item).split(",")]
        if len(parts) > 1 and not all(parts):
            raise forms.ValidationError(EMPTY_ITEM, code="empty_item")
        return [part for part in parts if part]

    def accepted(self) -> set[str]:
        """The accepted values, read once per clean: Django checks each value against the choices one by one, and
        iterating database-backed choices (GPU or provider slugs) normalises the whole list again each time."""
        return accepted_values(self.choices)

    def validate(self, value, accepted: set[str] | None = None):
        if not value:
            if self.required:
                raise forms.ValidationError(self.error_messages["required"], code="required")
            return
        valid = self.accepted() if accepted is None else accepted
        for item in value:
            if item not in valid:
                raise invalid_choice(item, valid)


def accepted_values(choices) -> set[str]:
    """The keys of a choice list, a callable giving one, or Django's wrapper of that callable: the callable's own
    list (kept per data version, providers.filters.gpu_choices) is read as it is, not normalised again."""
    if isinstance(choices, CallableChoiceIterator):
        choices = choices.func
    if callable(choices):
        choices = choices()
    return {str(key) for key, _label in choices}


def catalog_spelling(values: list[str], valid: set[str]) -> list[str]:
    """`values` as the catalog spells them (`AWS` -> `aws`, `h100` -> `H100`) among the accepted values `valid`, each
    once: a value matching no choice, or two of them ignoring case, is kept as given for the field to refuse by name."""
    if valid.issuperset(values):
        return values
    folded: dict[str, str | None] = {}
    for key in valid:
        folded[key.casefold()] = None if key.casefold() in folded else key
    return list(dict.fromkeys(item if item in valid else folded.get(item.casefold()) or item for item in values))


class CatalogChoiceField(CommaMultipleChoiceField):
    """A list of catalog values (GPU model and provider slugs, GPU families), read in any case: `?provider=AWS` is
    `aws`, `?gpu_family=h100` is `H100` (catalog_spelling). Fixed vocabularies (vendor, provider kind) stay exact."""

    def clean(self, value):
        value = self.to_python(value)
        accepted = self.accepted() if value else None
        if value:
            value = catalog_spelling(value, accepted)
        self.validate(value, accepted)
        self.run_validators(value)
        return value


class RenamedChoiceField(CommaMultipleChoiceField):
    """A CommaMultipleChoiceField that reads a retired choice as the one that replaced it (`renamed`)."""

    renamed: dict[str, str] = {}

    def to_python(self, value):
        return list(dict.fromkeys(self.renamed.get(item, item) for item in super().to_python(value)))


class RdmaChoiceField(RenamedChoiceField):
    renamed = RDMA_RENAMED


class RepeatedOrCommaCSVWidget(BaseCSVWidget):
    """A comma-separated list that may also come as repeated keys (`?ordering=a&ordering=b`, what generated clients
    send for an array): read as `?ordering=a,b`, never as the last key alone."""

    def value_from_datadict(self, data, files, name):
        if hasattr(data, "getlist") and len(data.getlist(name)) > 1:
            return ",".join(data.getlist(name)).split(",")
        return super().value_from_datadict(data, files, name)


class RepeatedOrCommaTextInput(forms.TextInput):
    """A text field holding a comma-separated list (`?country=US,DE`) that may also come as repeated keys."""

    def value_from_datadict(self, data, files, name):
        if hasattr(data, "getlist") and len(data.getlist(name)) > 1:
            return ",".join(data.getlist(name))
        return super().value_from_datadict(data, files, name)


class StrictBooleanField(forms.NullBooleanField):
    """True, False or None (no filter); an unrecognised word is a validation error, not a silent None."""

    widget_values = {"true": True, "1": True, "yes": True, "on": True,
                     "false": False, "0": False, "no": False, "off": False,
                     "": None, "unknown": None}  # "unknown" is what the NullBooleanSelect's empty option sends

    def to_python(self, value):
        if value is None or isinstance(value, bool):
            return value
        key = str(value).strip().lower()
        if key not in self.widget_values:
            raise forms.ValidationError(
                _("Use true or false (also 1/0, yes/no, on/off); not understood: %(value)s"),
                code="invalid", params={"value": value},
            )
        return self.widget_values[key]

    def validate(self, value):
        pass


class StrictBooleanSelect(forms.NullBooleanSelect):
    """Renders like Django's yes/no/unknown select but hands the raw text to the field, so it can refuse typos."""

    def value_from_datadict(self, data, files, name):
        return data.get(name)


class RoundedDecimalField(forms.DecimalField):
    """A number rounded to the places the column stores instead of refused for its extra digits: 2.123456789 is a
    fine price limit (the schema promises any number), compared as 2.12346. A value too large to round is left
    for the max_value check to refuse; 1e-400 rounds to 0."""

    def to_python(self, value):
        number = super().to_python(value)
        if number is None or not number.is_finite() or self.decimal_places is None:
            return number
        try:
            return number.quantize(Decimal(1).scaleb(-self.decimal_places))
        except InvalidOperation:
            return number


class AcceptedChoiceField(ChoiceField):
    def validate(self, value):
        if value not in (None, "") and not self.valid_value(value):
            raise invalid_choice(value, [key for key, _label in self.choices])



# What VersionField accepts, as the API schema states it: ASCII digits, one dot, nothing around them.
VERSION_PATTERN = r"^[0-9]+\.[0-9]+$"


class VersionField(forms.CharField):
    """A major.minor version such as 12.8 or 1.35; anything else ('12', '12.x', 'latest', ' 1.35') is an error
    naming it."""

    def __init__(self, *args, **kwargs):
        kwargs["strip"] = False
        super().__init__(*args, **kwargs)

    def clean(self, value):
        value = super().clean(value)
        if not value:
            return None
        try:
            if not re.match(VERSION_PATTERN, value):
                raise ValueError(value)
            node_compat.parse_cuda_version(value)
        except ValueError:
            raise forms.ValidationError(_("Use a version such as 12.8 or 1.35; not understood: %(value)s"),
                                        code="invalid", params={"value": value}) from None
        return value.strip()


class CudaVersionField(VersionField):
    """A CUDA version whose major release NVIDIA's CUDA-to-driver table (nodesoftware/data/cuda.toml) has a rule for:
    `?cuda=99.0` can be answered for no node, so it is an error naming the releases the table covers, not "unknown"
    for every offer."""

    def clean(self, value):
        value = super().clean(value)
        if value is None:
            return None
        majors = sorted(node_compat.table().major_min_branch)
        if node_compat.parse_cuda_version(value)[0] not in majors:
            raise forms.ValidationError(
                _("CUDA %(value)s is not in NVIDIA's CUDA-to-driver table we read, which covers CUDA %(first)s.x to "
                  "%(last)s.x."), code="unknown_release",
                params={"value": value, "first": majors[0], "last": majors[-1]})
        return value



ISO_3166_TABLE = Path(__file__).resolve().parent.parent / "data" / "iso3166.tab"


@cache
def country_codes() -> frozenset[str]:
    """The assigned ISO 3166-1 alpha-2 codes, from tzdata's iso3166.tab (copied into providers/data, see its README):
    `?country=zz` names no country, so it is an error rather than a silently empty result."""
    lines = ISO_3166_TABLE.read_text(encoding="utf-8").splitlines()
    return frozenset(line.split("\t", 1)[0] for line in lines if line and not line.startswith("#"))


class CountryListField(forms.CharField):
    """Comma-separated ISO 3166-1 alpha-2 codes, e.g. `US,DE` (or repeated keys); each must be an assigned code."""

    widget = RepeatedOrCommaTextInput

    def clean(self, value):
        value = super().clean(value)
        if not value:
            return []
        codes = [code.strip().upper() for code in value.split(",") if code.strip()]
        invalid = [code for code in codes if len(code) != 2 or not code.isalpha()]
        if invalid:
            raise forms.ValidationError(
                _("Use two-letter ISO country codes such as US or DE; not understood: %(codes)s"),
                params={"codes": ", ".join(invalid)},
            )
        unassigned = [code for code in codes if code not in country_codes()]
        if unassigned:
            raise forms.ValidationError(
                _("No country has the ISO code %(codes)s; use codes such as US or DE."),
                params={"codes": ", ".join(unassigned)},
            )
        return codes


class NoEmptyItemsCSVField(BaseCSVField):
    """A comma-separated list (or repeated keys) in which an empty item (`,`, `price_per_gpu_hour,,`) is an error, not
    a sort key."""

    base_widget_class = RepeatedOrCommaCSVWidget

    def clean(self, value):
        cleaned = super().clean(value)
        if cleaned and any(item in ("", None) for item in cleaned):
            raise forms.ValidationError(EMPTY_ITEM, code="empty_item")
        return cleaned


class OfferFilterForm(forms.Form):
    """The filters' form: a GPU-count range whose minimum is above its maximum can match nothing, so it is an error
    naming both, not an empty answer."""

    def clean(self):
        data = super().clean()
        low, high = data.get("gpu_count_min"), data.get("gpu_count_max")
        if low is not None and high is not None and low > high:
            self.add_error("gpu_count_max", forms.ValidationError(
                _("%(high)s is below gpu_count_min (%(low)s): no offer can match."), code="empty_range",
                params={"high": high.normalize(), "low": low.normalize()}))
        return data
