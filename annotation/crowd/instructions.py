"""A study's instructions: Markdown written by curators, rendered to HTML that a page can show as is.

Raw HTML in the source is shown as text, never interpreted, and `href`/`src` values whose scheme is
not http(s) or mailto (javascript:, data:, vbscript: …) become "#". Python-Markdown has no sanitiser
of its own, so these two rules are written here as Markdown extensions.
"""

from urllib.parse import urlsplit
from xml.etree.ElementTree import Element

import markdown
from django.utils.safestring import SafeString, mark_safe
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor

SAFE_SCHEMES = {"http", "https", "mailto", ""}


class _SafeLinks(Treeprocessor):
    """Drop href/src values whose scheme is not http(s)/mailto."""

    def run(self, root: Element):
        for node in root.iter():
            for attribute in ("href", "src"):
                value = node.get(attribute)
                if value is not None and urlsplit(value.strip()).scheme.lower() not in SAFE_SCHEMES:
                    node.set(attribute, "#")


class SafeMarkdown(Extension):
    """Raw HTML in the source is shown as text, and unsafe link schemes are dropped."""

    def extendMarkdown(self, md):  # noqa: N802 (Markdown's API)
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        md.treeprocessors.register(_SafeLinks(md), "safe_links", 1)


def render_markdown(text: str) -> SafeString:
    """The instructions as HTML, safe to put in a page without escaping."""
    return mark_safe(markdown.markdown(text or "", extensions=[SafeMarkdown(), "sane_lists"]))
