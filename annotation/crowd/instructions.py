"""Markdown that curators write (a study's instructions and consent text), rendered to HTML that a page can
show as is. `render_markdown` is the one way such text becomes HTML (pages and the settings form's preview).

Python-Markdown converts the text, with raw HTML in the source shown as text; then nh3 (Ammonia) keeps only
the tags, attributes and URL schemes allowed below, reading entities the way a browser does, and gives every
link rel="noopener noreferrer". To let curators use more Markdown, add its tags and attributes here; a
new kind of URL (another scheme, another site's images) also needs the Content-Security-Policy
(config.content_security) to allow it.
"""

import markdown
import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown.extensions import Extension

ALLOWED_TAGS = frozenset({
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "img",
})
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "ol": {"start"}}
# Relative URLs (this site's pages and files) are allowed as well.
ALLOWED_URL_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer"

_SANITISER = nh3.Cleaner(tags=set(ALLOWED_TAGS), attributes=ALLOWED_ATTRIBUTES, url_schemes=set(ALLOWED_URL_SCHEMES),
                         link_rel=LINK_REL, strip_comments=True)


class RawHtmlAsText(Extension):
    """Raw HTML in the source is shown as text, never interpreted."""

    def extendMarkdown(self, md):  # noqa: N802 (Markdown's API)
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")


def render_markdown(text: str) -> SafeString:
    """The Markdown as sanitised HTML, safe to put in a page without escaping."""
    html = markdown.markdown(text or "", extensions=[RawHtmlAsText(), "sane_lists"])
    return mark_safe(_SANITISER.clean(html))
