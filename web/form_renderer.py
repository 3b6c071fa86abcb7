"""The site's form renderer (settings.FORM_RENDERER): Django's own, except that the widgets the site's forms use
(inputs, selects, checkbox and radio lists) and label tags are written in Python rather than through Django's
widget templates.

Django draws every option of a list through two nested template includes: the offers page's filter panel (about 45
fields, the GPU models alone 82 checkboxes) took 30.6 ms to draw that way, and 12.8 ms of a 29.9 ms page with each
widget's HTML kept per exact inputs (the mechanism this replaces); written here its widgets take 3.8 ms, nothing kept.
It is the same HTML, byte for byte: `tests/ui/test_form_renderer.py` compares both renderers on every widget kind and
on the whole panel in both languages, so a Django upgrade that changes its templates fails there. Any other template
(a whole form, an error list) goes to Django's templates as before.
"""

from __future__ import annotations

from html import escape

from django.forms.renderers import DjangoTemplates
from django.utils.formats import localize
from django.utils.safestring import SafeData


def _text(value) -> str:
    """A value as `{{ value }}` writes it in a template: localized, then escaped unless marked safe (what Django's
    conditional_escape does, without its lazy-text wrapper, which was most of the time here)."""
    if not isinstance(value, str):
        value = localize(value)
        if hasattr(value, "__html__"):
            return value.__html__()
    return value if isinstance(value, SafeData) else escape(str(value))


def _formatted(value) -> str:
    """A value as `{{ value|stringformat:'s' }}` writes it: as text, not localized, escaped unless marked safe."""
    return value if isinstance(value, SafeData) else escape(str(value))


def _attrs(attrs: dict) -> str:
    """django/forms/widgets/attrs.html: ` name="value"` each, a bare ` name` for True, nothing for False."""
    return "".join(
        f" {_text(name)}" if value is True else f' {_text(name)}="{_formatted(value)}"'
        for name, value in attrs.items() if value is not False
    )


def _input(widget: dict) -> str:
    """django/forms/widgets/input.html (and so number.html, text.html, checkbox.html, ...), with its last line end."""
    value = f' value="{_formatted(widget["value"])}"' if widget["value"] is not None else ""
    return f'<input type="{_text(widget["type"])}" name="{_text(widget["name"])}"{value}{_attrs(widget["attrs"])}>\n'


def _input_option(option: dict) -> str:
    """checkbox_option.html and radio_option.html: input_option.html's label around the input, and both files' line
    ends."""
    html = _input(option)
    if option["wrap_label"]:
        label_for = f' for="{_text(option["attrs"]["id"])}"' if option["attrs"].get("id") else ""
        html = f"<label{label_for}>{html} {_text(option['label'])}</label>"
    return html + "\n\n"


def _multiple_input(widget: dict) -> str:
    """django/forms/widgets/multiple_input.html: checkbox and radio lists."""
    id_, css = widget["attrs"].get("id"), widget["attrs"].get("class")
    id_html = f' id="{_text(id_)}"' if id_ else ""
    class_html = f' class="{_text(css)}"' if css else ""
    parts = [f"<div{id_html}{class_html}>"]
    for group, options, _index in widget["optgroups"]:
        if group:
            parts.append(f"\n  <div><label>{_text(group)}</label>")
        parts.extend(f"<div>\n    {_input_option(option)}</div>" for option in options)
        if group:
            parts.append("\n  </div>")
    parts.append("\n</div>")
    return "".join(parts)


def _select(widget: dict) -> str:
    """django/forms/widgets/select.html with select_option.html."""
    parts = [f'<select name="{_text(widget["name"])}"{_attrs(widget["attrs"])}>']
    for group, options, _index in widget["optgroups"]:
        if group:
            parts.append(f'\n  <optgroup label="{_text(group)}">')
        parts.extend(f'\n  <option value="{_formatted(option["value"])}"{_attrs(option["attrs"])}>'
                     f'{_text(option["label"])}</option>\n' for option in options)
        if group:
            parts.append("\n  </optgroup>")
    parts.append("\n</select>")
    return "".join(parts)


def _label(context: dict) -> str:
    """django/forms/label.html."""
    if not context["use_tag"]:
        return _text(context["label"])
    tag = _text(context["tag"])
    return f"<{tag}{_attrs(context['attrs'] or {})}>{_text(context['label'])}</{tag}>"


_WIDGETS = "django/forms/widgets/"
DRAWN = {
    **{f"{_WIDGETS}{kind}.html": _input for kind in (
        "input", "text", "number", "email", "url", "password", "search", "tel", "date", "datetime", "time",
        "hidden", "checkbox", "color", "file")},
    f"{_WIDGETS}checkbox_select.html": _multiple_input,
    f"{_WIDGETS}radio.html": _multiple_input,
    f"{_WIDGETS}multiple_input.html": _multiple_input,
    f"{_WIDGETS}select.html": _select,
}


# The option templates the drawn lists write; a widget naming another one goes to Django's templates.
OPTIONS = {f"{_WIDGETS}{name}.html" for name in ("checkbox_option", "radio_option", "input_option", "select_option")}


class FormRenderer(DjangoTemplates):
    """Django's template form renderer with the templates in DRAWN, and label tags, written in Python."""

    def render(self, template_name, context, request=None):
        draw = DRAWN.get(template_name)
        widget = context.get("widget")
        if draw is not None and all(option["template_name"] in OPTIONS
                                    for _group, options, _index in (widget.get("optgroups") or ())
                                    for option in options):
            return draw(widget).strip()
        if template_name == "django/forms/label.html":
            return _label(context).strip()
        return super().render(template_name, context, request)
