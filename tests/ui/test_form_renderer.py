"""The Python widget renderer writes exactly what Django's widget templates write, on the pages that use forms and
for the awkward cases (escaping, option groups, disabled options, errors, described-by ids)."""

import re

import pytest
from django import forms
from django.forms.renderers import DjangoTemplates
from django.test import override_settings

from tests.ui import builders
from web.form_renderer import PYTHON_TEMPLATES, PythonWidgetRenderer

pytestmark = pytest.mark.django_db

DJANGO = "django.forms.renderers.DjangoTemplates"
OURS = "web.form_renderer.PythonWidgetRenderer"


def test_the_site_uses_the_python_renderer(settings):
    assert settings.FORM_RENDERER == OURS


def page(client, url: str, renderer: str, language: str) -> str:
    from django.forms.renderers import get_default_renderer

    with override_settings(FORM_RENDERER=renderer):
        get_default_renderer.cache_clear()
        try:
            client.cookies["django_language"] = language
            response = client.get(url)
        finally:
            get_default_renderer.cache_clear()
    assert response.status_code in (200, 400), (url, response.status_code)
    # The CSRF token is new on every response; everything else must match.
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", response.content.decode())


@pytest.mark.parametrize("url", [
    "/",
    "/?gpu_family=H100&mig=yes&rdma=infiniband&offering=managed&price_per_gpu_hour_max=3&ordering=-gpu_memory",
    "/?currency=EUR&unit=instance&provider=acme,metal&spot=true&country=US&region=us-east",
    # invalid values: error lists, aria-invalid and the form's values echoed back (escaped)
    "/?price_per_gpu_hour_max=cheap&gpu=no-such-gpu&country=USA&region=%22%3E%3Cscript%3E&seen_within_hours=-1",
    "/?gpu_family=A100&available=false",
    "/advisor/",
    "/advisor/?kind=training&gpu_count=16&gpu_memory_min=80&budget=oops",
    "/compare/?providers=acme,metal",
    "/digest/subscribe/?gpu_family=H100",
])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_pages_are_byte_identical_with_either_renderer(client, url, language):
    builders.catalog()
    assert page(client, url, OURS, language) == page(client, url, DJANGO, language)


class Awkward(forms.Form):
    many = forms.MultipleChoiceField(
        label='Say "hi" & <b>', help_text="help <i>", required=False, widget=forms.CheckboxSelectMultiple,
        choices=[("a&b", "A & B"), ("q\"'", "quote \" '"), ("Group <1>", [("x", "X"), ("y", "Y")])])
    one = forms.ChoiceField(label="One", choices=[("", "---"), ("1", "first"), ("G", [("2", "two"), ("3", 3)])],
                            widget=forms.Select(attrs={"class": "c", "data-x": '"<>'}))
    radio = forms.ChoiceField(label="Radio", choices=[("a", "A"), ("b", "B")], widget=forms.RadioSelect)
    number = forms.DecimalField(label="Number", required=False, widget=forms.NumberInput(attrs={"step": "any"}))
    text = forms.CharField(label="Text", required=False, max_length=3,
                           widget=forms.TextInput(attrs={"autofocus": True}))
    hidden = forms.CharField(required=False, widget=forms.HiddenInput)
    email = forms.EmailField(required=False)
    day = forms.DateField(required=False)
    at = forms.TimeField(required=False)
    moment = forms.DateTimeField(required=False)
    secret = forms.CharField(required=False, widget=forms.PasswordInput(render_value=True))
    query = forms.CharField(required=False, widget=forms.SearchInput)
    phone = forms.CharField(required=False, widget=forms.TelInput)
    colour = forms.CharField(required=False, widget=forms.ColorInput)
    url = forms.URLField(required=False, assume_scheme="https")


@pytest.mark.parametrize("data", [
    None,
    {"many": ["a&b", "x"], "one": "3", "radio": "b", "number": "1.5", "text": '<">', "hidden": "h&", "email": "a@b.c",
     "day": "2026-11-29", "at": "18:30", "moment": "2026-11-29 18:30", "secret": "s&'", "query": "<q>",
     "phone": "+86 10", "colour": "#ff0000"},
    {"many": ["nope"], "one": "9", "number": "x", "text": "toolong", "email": "no", "url": "no", "day": "soon",
     "moment": "later"},
])
@pytest.mark.parametrize("auto_id", ["id_%s", "", "f-%s"])
def test_widgets_labels_and_errors_match_djangos_templates(data, auto_id):
    ours, django = Awkward(data, auto_id=auto_id, renderer=PythonWidgetRenderer()), Awkward(
        data, auto_id=auto_id, renderer=DjangoTemplates())
    if data is not None:
        assert not ours.is_valid() or data.get("text") == '<">'
        django.is_valid()
    for name in ours.fields:
        assert str(ours[name]) == str(django[name]), name
        assert ours[name].label_tag() == django[name].label_tag(), name
        assert str(ours[name].errors) == str(django[name].errors), name
    assert str(ours) == str(django)


def test_templates_it_does_not_know_go_to_django():
    checkbox = forms.BooleanField(required=False)
    form = forms.Form(renderer=PythonWidgetRenderer())
    form.fields["agree"] = checkbox
    assert "django/forms/widgets/checkbox.html" not in PYTHON_TEMPLATES
    assert str(form["agree"]) == '<input type="checkbox" name="agree" id="id_agree">'


@pytest.mark.parametrize("value", [[], ["a&b"], ["a&b", "c"], ["nope"]])
@pytest.mark.parametrize("attrs", [{"id": "id_x"}, {"id": "id_x", "aria-invalid": "true"}, {}])
def test_remembered_checkboxes_write_what_django_writes_every_time(value, attrs):
    from web.form_renderer import RememberedCheckboxes

    choices = [("a&b", "A & B"), ("c", "C")]
    renderer = PythonWidgetRenderer()
    expected = forms.CheckboxSelectMultiple(choices=choices).render("x", value, attrs, renderer)
    remembered = RememberedCheckboxes(choices=choices)
    assert remembered.render("x", value, attrs, renderer) == expected
    assert remembered.render("x", value, attrs, renderer) == expected  # the kept copy


def test_remembered_checkboxes_render_anew_for_another_language_label_or_choice():
    from django.utils import translation
    from django.utils.translation import gettext_lazy

    from web.form_renderer import RememberedCheckboxes

    widget = RememberedCheckboxes(choices=[("yes", gettext_lazy("yes"))])
    with translation.override("en"):
        english = widget.render("mig", ["yes"], {"id": "id_mig"})
    with translation.override("zh-hans"):
        chinese = widget.render("mig", ["yes"], {"id": "id_mig"})
    assert "\n yes</label>" in english and "\n 是</label>" in chinese
    widget.choices = [("yes", "yes"), ("no", "no")]
    with translation.override("en"):
        assert 'value="no"' in widget.render("mig", ["yes"], {"id": "id_mig"})
        assert "checked" not in widget.render("mig", [], {"id": "id_mig"})
