"""Forms of the subscribe and manage pages. The filter itself is never a field here: it is OfferFilterSet's
parameters, parsed by savedfilters.saved_filter_parse."""

from django import forms
from django.utils.translation import gettext_lazy as _

from .models import Language

FORM_PARAMS = frozenset({"email", "language", "always_send", "action"})


class SubscribeForm(forms.Form):
    email = forms.EmailField(label=_("Email address"), max_length=254)
    language = forms.ChoiceField(label=_("Language of the email"), choices=Language.choices,
                                 widget=forms.RadioSelect, initial=Language.ENGLISH)
    always_send = forms.BooleanField(label=_("Send the digest even in a week when nothing changed"), required=False)

    def clean_email(self) -> str:
        # The domain part is case-insensitive; the local part is kept as typed (RFC 5321).
        local, _sep, domain = self.cleaned_data["email"].strip().rpartition("@")
        return f"{local}@{domain.lower()}"


class ManageForm(forms.Form):
    language = forms.ChoiceField(label=_("Language of the email"), choices=Language.choices,
                                 widget=forms.RadioSelect)
    always_send = forms.BooleanField(label=_("Send the digest even in a week when nothing changed"), required=False)
