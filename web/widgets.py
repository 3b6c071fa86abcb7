"""Form widgets that keep their HTML for the exact inputs they were rendered from (the filter panel and the display
options are drawn on every offers page view, with the same values most of the time)."""

from __future__ import annotations

from django import forms


class RememberedRendering:
    """A widget mixin: the HTML is kept for the exact inputs it was rendered from (the widget's class, the renderer,
    the name, the value as the widget formats it, the attributes, whether a value is required, and every choice's
    value and text in the active language).

    The filter panel shows the same long lists (71 GPU models, every provider) and the same dozen selects and number
    boxes on every page view, mostly empty or with the same few values; each rendered through Django's widget
    templates cost about a millisecond. The key holds everything the HTML depends on, so a new label, a new choice or
    another language is a new entry, never a stale one."""

    remembered: dict[tuple, str] = {}
    REMEMBER_AT_MOST = 4096

    def render(self, name, value, attrs=None, renderer=None):
        formatted = self.format_value(value)
        choices = getattr(self, "choices", None)
        key = (type(self), type(renderer), name, tuple(formatted) if isinstance(formatted, list) else formatted,
               tuple(self.build_attrs(self.attrs, attrs).items()), self.is_required,
               None if choices is None else tuple((str(choice), str(label)) for choice, label in choices),
               getattr(self, "disabled_values", None))
        html = self.remembered.get(key)
        if html is None:
            if len(self.remembered) >= self.REMEMBER_AT_MOST:
                self.remembered.clear()
            html = self.remembered[key] = super().render(name, value, attrs, renderer)
        return html


_REMEMBERING: dict[type, type] = {}


def remembering(widget: forms.Widget) -> forms.Widget:
    """`widget`, its class swapped for one that keeps its HTML (RememberedRendering) and otherwise behaves alike."""
    cls = type(widget)
    if not issubclass(cls, RememberedRendering):
        if cls not in _REMEMBERING:
            _REMEMBERING[cls] = type(f"Remembered{cls.__name__}", (RememberedRendering, cls), {})
        widget.__class__ = _REMEMBERING[cls]
    return widget


class RememberedLabelField(forms.BoundField):
    """A bound field whose <label> tag is kept for the exact inputs it was rendered from (the label and suffix in
    the active language, the id, the attributes, the renderer and its template): the panel's 17 labels each went
    through Django's label template on every page view."""

    remembered: dict[tuple, str] = {}

    def label_tag(self, contents=None, attrs=None, label_suffix=None, tag=None):
        form, field = self.form, self.field
        suffix = label_suffix if label_suffix is not None else (
            field.label_suffix if field.label_suffix is not None else form.label_suffix)
        key = (type(form.renderer), form.template_name_label, str(contents or self.label), str(suffix),
               tuple((attrs or {}).items()), tag, field.widget.attrs.get("id") or self.auto_id, field.required,
               getattr(form, "required_css_class", None), type(field.widget))
        html = self.remembered.get(key)
        if html is None:
            if len(self.remembered) >= RememberedRendering.REMEMBER_AT_MOST:
                self.remembered.clear()
            html = self.remembered[key] = super().label_tag(contents, attrs, label_suffix, tag)
        return html
