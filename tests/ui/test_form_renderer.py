"""The site's form renderer (web.form_renderer) writes what Django's own template renderer writes, byte for byte:
every widget kind the site's forms use, with and without values, escaping, attributes and option groups, labels,
and the whole offers-page filter panel and display options in both languages."""

import pytest
from django import forms
from django.forms.renderers import DjangoTemplates
from django.http import QueryDict
from django.test import RequestFactory
from django.utils import translation
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy

from web.form_renderer import FormRenderer

DJANGO, OURS = DjangoTemplates(), FormRenderer()

CHOICES = [("", "any"), ("a&b", "A & B"), ("c\"d", gettext_lazy("yes")), (3, "three <3>")]
GROUPED = [("Group <1>", [("x", "X"), ("y", "Y")]), ("z", "Z")]

WIDGETS = [
    (lambda: forms.Select(choices=CHOICES), ["", "a&b", None, 3, "nope"]),
    (lambda: forms.Select(choices=GROUPED), ["y", None]),
    (lambda: forms.SelectMultiple(choices=CHOICES), [[], ["a&b", "3"]]),
    (lambda: forms.NullBooleanSelect(), [None, True, False, "unknown"]),
    (lambda: forms.RadioSelect(choices=[("gpu", "per GPU"), ("instance", "per instance")]), ["gpu", "instance", None]),
    (lambda: forms.CheckboxSelectMultiple(choices=CHOICES), [[], ["a&b"], ["a&b", 3], ["nope"]]),
    (lambda: forms.CheckboxSelectMultiple(choices=GROUPED), [["x", "z"]]),
    (lambda: forms.NumberInput(attrs={"step": "any", "inputmode": "decimal"}), [None, "", "3", "3.5<", 7]),
    (lambda: forms.TextInput(attrs={"placeholder": "h100, a100 & more"}), [None, 'h100 "sxm"', mark_safe("<b>")]),
    (lambda: forms.EmailInput(), ["a@b.example"]),
    (lambda: forms.HiddenInput(), ["x&y"]),
    (lambda: forms.CheckboxInput(), [True, False, None]),
    (lambda: forms.DateInput(), [None, "2026-12-05"]),
]


@pytest.mark.parametrize(("make", "values"), WIDGETS)
@pytest.mark.parametrize("attrs", [{"id": "id_x"}, {"id": "id_x", "aria-invalid": "true", "required": True,
                                                    "disabled": False, "class": "wide & tall"}, {}])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_every_widget_kind_writes_what_django_writes(make, values, attrs, language):
    with translation.override(language):
        for value in values:
            widget = make()
            assert widget.render("x", value, attrs, renderer=OURS) == widget.render("x", value, attrs, renderer=DJANGO)


def test_a_list_whose_options_name_another_template_goes_to_django():
    class Special(forms.CheckboxSelectMultiple):
        option_template_name = "django/forms/widgets/input.html"  # a template this renderer does not draw lists with

    widget = Special(choices=[("a", "A")])
    assert widget.render("x", ["a"], {"id": "id_x"}, renderer=OURS) == widget.render("x", ["a"], {"id": "id_x"},
                                                                                     renderer=DJANGO)


@pytest.mark.parametrize("label", ["Minimum memory per GPU (GB)", "Price?", "A & B"])
@pytest.mark.parametrize("auto_id", ["id_%s", False])
def test_labels_write_what_django_writes(label, auto_id):
    class Plain(forms.Form):
        memory = forms.DecimalField(label=label, required=True)

    ours, theirs = Plain(auto_id=auto_id, renderer=OURS), Plain(auto_id=auto_id, renderer=DJANGO)
    ours.required_css_class = theirs.required_css_class = "required"
    assert ours["memory"].label_tag() == theirs["memory"].label_tag()
    assert ours["memory"].label_tag(attrs={"class": "x"}, label_suffix=" →") == theirs["memory"].label_tag(
        attrs={"class": "x"}, label_suffix=" →")


QUERIES = ["", "gpu_family=h100&mig=yes&price_per_gpu_hour_max=3.5&unknown=include",
           "provider=aws&provider=gcp&gpu_count_min=8&rdma=infiniband&ordering=-gpu_memory",
           "price_per_gpu_hour_max=cheap&mig=maybe&currency=EUR&unit=instance&period=month"]


@pytest.mark.django_db
@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_whole_filter_panel_and_display_options_are_what_django_writes(query, language):
    """The panel as the page draws it (web.views.filter_groups_html's template, with errors for a bad query) and
    the display options, through both renderers."""
    from django.template.loader import render_to_string

    from providers import facts_sync
    from web.display import DisplayForm, display_conversions
    from web.filter_panel import OfferPanelFilterSet, filter_groups

    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()
    params = QueryDict(query)
    html = {}
    with translation.override(language):
        for name, renderer in (("ours", OURS), ("django", DJANGO)):
            filterset = OfferPanelFilterSet(params, request=RequestFactory().get("/"))
            filterset.form.renderer = renderer
            filterset.is_valid()
            display = DisplayForm(params, rates=display_conversions())
            display.renderer = renderer
            display.is_valid()
            html[name] = (render_to_string("offers/_filter_groups.html", {"groups": filter_groups(filterset.form)}),
                          "".join(str(field) + field.label_tag() for field in display))
    assert html["ours"] == html["django"]
    assert html["ours"][0].count('type="checkbox"') > 100  # the GPU models, families and providers are all there

