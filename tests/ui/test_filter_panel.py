"""The filter panel's widgets and labels keep their HTML for identical inputs: what they write must be what Django's
own widgets and label tags write, every time, in every language."""

import pytest
from django import forms
from django.utils import translation
from django.utils.translation import gettext_lazy

from web.filter_panel import RememberedCheckboxes


@pytest.mark.parametrize("value", [[], ["a&b"], ["a&b", "c"], ["nope"]])
@pytest.mark.parametrize("attrs", [{"id": "id_x"}, {"id": "id_x", "aria-invalid": "true"}, {}])
def test_remembered_checkboxes_write_what_django_writes_every_time(value, attrs):
    choices = [("a&b", "A & B"), ("c", "C")]
    expected = forms.CheckboxSelectMultiple(choices=choices).render("x", value, attrs)
    remembered = RememberedCheckboxes(choices=choices)
    assert remembered.render("x", value, attrs) == expected
    assert remembered.render("x", value, attrs) == expected  # the kept copy


def test_remembered_checkboxes_render_anew_for_another_language_label_or_choice():
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


WIDGETS = [
    (lambda: forms.Select(choices=[("", "any"), ("a&b", "A & B")]), ["", "a&b", None]),
    (lambda: forms.RadioSelect(choices=[("gpu", "per GPU"), ("instance", "per instance")]), ["gpu", "instance"]),
    (lambda: forms.NumberInput(attrs={"step": "any"}), [None, "3", "3.5<"]),
    (lambda: forms.TextInput(), [None, "h100 \"sxm\""]),
]


@pytest.mark.parametrize(("make", "values"), WIDGETS)
@pytest.mark.parametrize("attrs", [{"id": "id_x"}, {"id": "id_x", "aria-invalid": "true"}])
def test_every_remembered_panel_widget_writes_what_django_writes(make, values, attrs):
    """The panel's selects, radio buttons and inputs keep their HTML too (web.widgets.remembering)."""
    from web.widgets import remembering

    for value in values:
        expected = make().render("x", value, attrs)
        widget = remembering(make())
        assert widget.render("x", value, attrs) == expected
        assert widget.render("x", value, attrs) == expected  # the kept copy


def test_remembered_labels_write_what_django_writes_in_each_language():
    from web.widgets import RememberedLabelField

    class Plain(forms.Form):
        memory = forms.DecimalField(label=gettext_lazy("Minimum memory per GPU (GB)"), required=False)
        why = forms.CharField(label="Why?", required=False)

    class Kept(Plain):
        bound_field_class = RememberedLabelField

    for language in ("en", "zh-hans", "en"):
        with translation.override(language):
            for name in ("memory", "why"):
                assert Kept()[name].label_tag() == Plain()[name].label_tag()
                assert Kept(auto_id="f_%s")[name].label_tag() == Plain(auto_id="f_%s")[name].label_tag()
