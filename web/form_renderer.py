"""Django's form widget templates, written in Python for the widgets this site renders most.

The offers page's filter panel holds about 250 checkboxes and options. Django renders each one through three
nested template includes, which made the panel most of the page's server time. This renderer writes the same
markup (byte for byte: tests/ui/test_form_renderer.py compares it with Django's own templates for every field of
every form on the site) for the templates it knows, and hands any other template to Django's renderer unchanged.
"""

from __future__ import annotations

from html import escape as _escape

from django import forms
from django.forms.renderers import DjangoTemplates
from django.utils.formats import localize
from django.utils.safestring import SafeData, mark_safe


def _text(value) -> str:
    """`{{ value|stringformat:'s' }}`: str() then autoescape unless already safe."""
    text = str(value)
    return text if isinstance(value, SafeData) else _escape(text)


def _shown(value) -> str:
    """`{{ value }}`: localized, str(), then autoescape unless already safe."""
    if isinstance(value, SafeData):
        return str(value)
    return _escape(str(localize(value)))


def _attrs(attrs) -> str:
    """django/forms/widgets/attrs.html and django/forms/attrs.html."""
    parts = []
    for name, value in attrs.items():
        if value is False:
            continue
        parts.append(f" {_shown(name)}" if value is True else f' {_shown(name)}="{_text(value)}"')
    return "".join(parts)


def _input(widget) -> str:
    """django/forms/widgets/input.html, with its trailing newline."""
    value = "" if widget["value"] is None else f' value="{_text(widget["value"])}"'
    return f'<input type="{_shown(widget["type"])}" name="{_shown(widget["name"])}"{value}{_attrs(widget["attrs"])}>\n'


def _input_option(option) -> str:
    """django/forms/widgets/input_option.html as included by checkbox_option.html and radio_option.html."""
    if not option["wrap_label"]:
        return _input(option) + "\n\n"
    option_id = option["attrs"].get("id")
    label_for = f' for="{_shown(option_id)}"' if option_id else ""
    return f"<label{label_for}>{_input(option)} {_shown(option['label'])}</label>\n\n"


def _multiple_input(widget) -> str:
    """django/forms/widgets/multiple_input.html (checkbox_select.html and radio.html)."""
    widget_id = widget["attrs"].get("id")
    css = widget["attrs"].get("class")
    id_attr = f' id="{_shown(widget_id)}"' if widget_id else ""
    class_attr = f' class="{_shown(css)}"' if css else ""
    parts = [f"<div{id_attr}{class_attr}>"]
    for group, options, _index in widget["optgroups"]:
        if group:
            parts.append(f"\n  <div><label>{_shown(group)}</label>")
        for option in options:
            parts.append(f"<div>\n    {_input_option(option)}</div>")
        if group:
            parts.append("\n  </div>")
    parts.append("\n</div>")
    return "".join(parts)


def _select(widget) -> str:
    """django/forms/widgets/select.html with select_option.html."""
    parts = [f'<select name="{_shown(widget["name"])}"{_attrs(widget["attrs"])}>']
    for group, options, _index in widget["optgroups"]:
        if group:
            parts.append(f'\n  <optgroup label="{_shown(group)}">')
        for option in options:
            parts.append(f'\n  <option value="{_text(option["value"])}"{_attrs(option["attrs"])}>'
                         f'{_shown(option["label"])}</option>\n')
        if group:
            parts.append("\n  </optgroup>")
    parts.append("\n</select>")
    return "".join(parts)


def _error_list(context) -> str:
    """django/forms/errors/list/default.html (ul.html): most fields have no errors, and render nothing."""
    errors = context["errors"]
    if not errors:
        return ""
    field_id = getattr(errors, "field_id", None)
    id_attr = f' id="{_shown(field_id)}_error"' if field_id else ""
    items = "".join(f"<li>{_shown(error)}</li>" for error in errors)
    return f'<ul class="{_shown(context["error_class"])}"{id_attr}>{items}</ul>'


def _label(context) -> str:
    """django/forms/label.html."""
    if not context["use_tag"]:
        return _shown(context["label"])
    tag = _shown(context["tag"])
    return f"<{tag}{_attrs(context['attrs'] or {})}>{_shown(context['label'])}</{tag}>"


def _widget(render):
    return lambda context: render(context["widget"])


_INPUTS = ("text", "number", "email", "url", "search", "tel", "password", "hidden", "date", "datetime", "time",
           "color")
PYTHON_TEMPLATES = {
    "django/forms/widgets/checkbox_select.html": _widget(_multiple_input),
    "django/forms/widgets/radio.html": _widget(_multiple_input),
    "django/forms/widgets/select.html": _widget(_select),
    "django/forms/label.html": _label,
    "django/forms/errors/list/default.html": _error_list,
    **{f"django/forms/widgets/{name}.html": _widget(_input) for name in _INPUTS},
}


class PythonWidgetRenderer(DjangoTemplates):
    """Django's default form renderer, with the templates in PYTHON_TEMPLATES rendered by Python functions."""

    def render(self, template_name, context, request=None):
        render = PYTHON_TEMPLATES.get(template_name)
        if render is None:
            return super().render(template_name, context, request=request)
        return mark_safe(render(context).strip())


class RememberedCheckboxes(forms.CheckboxSelectMultiple):
    """Checkboxes whose HTML is kept for the exact inputs it was rendered from: the renderer, the name, the checked
    values, the attributes, whether a value is required, and every choice's value and text in the active language.

    The filter panel shows the same long lists (71 GPU models, every provider) on every page view, mostly with
    nothing or the same few boxes checked. The key holds everything the HTML depends on, so a new label, a new
    choice or another language is a new entry, never a stale one."""

    remembered: dict[tuple, str] = {}
    REMEMBER_AT_MOST = 4096

    def render(self, name, value, attrs=None, renderer=None):
        key = (type(self), type(renderer), name, tuple(self.format_value(value)),
               tuple(self.build_attrs(self.attrs, attrs).items()), self.is_required,
               tuple((str(choice), str(label)) for choice, label in self.choices))
        html = self.remembered.get(key)
        if html is None:
            if len(self.remembered) >= self.REMEMBER_AT_MOST:
                self.remembered.clear()
            html = self.remembered[key] = super().render(name, value, attrs, renderer)
        return html
