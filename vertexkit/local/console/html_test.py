"""Everything is escaped unless it is Markup built here."""

from __future__ import annotations

from vertexkit.local.console.html import Markup, el, escape


def test_text_and_attributes_are_escaped() -> None:
    built = el("a", "<script>alert(1)</script>", href='x" onclick="evil()')
    assert "<script>" not in built
    assert 'href="x&quot; onclick=&quot;evil()"' in built


def test_markup_children_are_kept_and_none_is_dropped() -> None:
    assert el("p", el("b", "x"), None, "y") == "<p><b>x</b>y</p>"
    assert escape(Markup("<i>")) == "<i>"


def test_attribute_names_and_flags() -> None:
    assert el("iframe", sandbox="", class_="f", data_task="t") == (
        '<iframe sandbox="" class="f" data-task="t"></iframe>'
    )
    assert (
        el("script", src="/s.js", defer=True, hidden=False) == '<script src="/s.js" defer></script>'
    )
