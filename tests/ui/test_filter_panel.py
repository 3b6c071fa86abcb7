"""The filter panel's checkbox lists keep their HTML for identical inputs: what they write must be what Django's
CheckboxSelectMultiple writes, every time, in every language."""

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
