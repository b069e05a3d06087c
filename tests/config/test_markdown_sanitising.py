"""Markdown that curators write (study instructions, consent text) reaches workers' pages sanitised by an
allow-list: known XSS vectors come out inert, ordinary Markdown still renders.

`executable_parts` reads the HTML the way a browser does (entities decoded, tabs and newlines dropped from
URLs) and names whatever could run script or load from elsewhere.
"""

import re
from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse

from annotation.crowd import instructions
from config.roles import ANNOTATOR, CURATOR
from tests.conftest import create_study, make_user

URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "background", "poster", "srcset", "data"}
SAFE_SCHEMES = {"http", "https", "mailto"}
# what Markdown makes, none of which runs script or embeds another document
SAFE_TAGS = {"p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "b", "i", "code", "pre", "blockquote",
             "ul", "ol", "li", "a", "img", "table", "thead", "tbody", "tr", "th", "td"}
FORM = {"fields": [{"name": "answer", "type": "text", "label": "Your answer"}]}
SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):")


def browser_url(value: str) -> str:
    """A URL attribute as the browser's URL parser sees it: ASCII tab/newline removed, C0 and spaces trimmed."""
    return re.sub(r"[\t\n\r]", "", value).strip("".join(map(chr, range(0x21))))


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in SAFE_TAGS:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on") or name in {"style", "srcdoc"}:
                self.found.append(f"{tag}[{name}]")
            if name in URL_ATTRIBUTES and value is not None:
                scheme = SCHEME.match(browser_url(value))
                if scheme and scheme.group(1).lower() not in SAFE_SCHEMES:
                    self.found.append(f"{tag}[{name}={value!r}]")

    handle_startendtag = handle_starttag


def executable_parts(html: str) -> list[str]:
    collector = _Collector()
    collector.feed(html)
    collector.close()
    return collector.found


def markdown_blocks(page: str) -> list[str]:
    """The rendered Markdown of a page (its `<div class="markdown …">` blocks; Markdown makes no div)."""
    return re.findall(r'<div class="markdown[^"]*">(.*?)</div>', page, re.DOTALL)


def executable_markdown(page: str) -> list[str]:
    blocks = markdown_blocks(page)
    assert blocks, "the page shows no Markdown"
    return [part for block in blocks for part in executable_parts(block)]


XSS_VECTORS = {
    # the scheme hidden behind character references, decoded by the browser after the server's check
    "hex entity in scheme": "[x](jav&#x61;script:alert(1))",
    "decimal entity in scheme": "[x](jav&#97;script:alert(1))",
    "entity as first letter": "[x](&#106;avascript:alert(1))",
    "named entity colon": "[x](javascript&colon;alert(1))",
    "zero-padded entity": "[x](&#0000106&#0000097vascript:alert(1))",
    "tab entity inside scheme": "[x](jav&#x09;ascript:alert(1))",
    "newline entity inside scheme": "[x](java&#10;script:alert(1))",
    "carriage return entity": "[x](java&#13;script:alert(1))",
    "leading control entity": "[x](&#x01;javascript:alert(1))",
    "reference link with entity": "[x][1]\n\n[1]: jav&#x61;script:alert(1)",
    "angle-bracket link with entity": "[x](<jav&#x61;script:alert(1)>)",
    "data URL with entity": "[x](data&#58;text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "data image with entity": "![x](data&#58;image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
    "vbscript with entity": "[x](vbscript&#58;msgbox(1))",
    "nested image in link": "[![i](jav&#x61;script:alert(1))](jav&#x61;script:alert(2))",
    "link inside link text": "[[a](jav&#x61;script:alert(1))](https://example.org/)",
    # rejected before too, kept as regression guards
    "plain javascript": "[x](javascript:alert(1))",
    "javascript with tab": "[x](java\tscript:alert(1))",
    "javascript with newline": "[x](java\nscript:alert(1))",
    "upper case scheme": "[x](JaVaScRiPt:alert(1))",
    "data URL": "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "data image": "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
    "raw script": "<script>alert(1)</script>",
    "img onerror": "<img src=x onerror=alert(1)>",
    "svg onload": "<svg onload=alert(1)>",
    "iframe": '<iframe src="javascript:alert(1)"></iframe>',
    "iframe srcdoc": '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
    "style expression": '<p style="width:expression(alert(1))">x</p>',
    "style element": "<style>body{background:url(javascript:alert(1))}</style>",
    "inline event in markdown text": "**bold** <b onmouseover=alert(1)>x</b>",
    "autolink javascript": "<javascript:alert(1)>",
    "html comment breakout": "<!--><img src=x onerror=alert(1)>-->",
    "title attribute breakout": '[x](https://example.org/ "a\\" onmouseover=\\"alert(1)")',
    "object data": '<object data="javascript:alert(1)"></object>',
    "form action": '<form action="javascript:alert(1)"><button>x</button></form>',
}


@pytest.mark.parametrize("source", XSS_VECTORS.values(), ids=XSS_VECTORS.keys())
def test_known_xss_vectors_render_inert(source):
    html = instructions.render_markdown(source)
    assert executable_parts(html) == [], html


def test_ordinary_markdown_still_renders():
    html = instructions.render_markdown(
        "# Steps\n\n## Before you start\n\n1. Look **closely**\n2. Then *decide*\n\n- one\n- two\n\n"
        "> Read the whole clip.\n\nUse `Ctrl+S` to save.\n\n    code block\n\n---\n\n"
        "[guide](https://example.org/guide \"The guide\"), [help](/help/), [mail](mailto:team@example.org)\n\n"
        "![diagram](/static/frontend/favicon.svg)")
    for fragment in ("<h1>Steps</h1>", "<h2>Before you start</h2>", "<ol>", "<li>Look <strong>closely</strong></li>",
                     "<em>decide</em>", "<ul>", "<blockquote>", "<code>Ctrl+S</code>", "<pre><code>code block",
                     "<hr", 'title="The guide"', 'href="/help/"', 'href="mailto:team@example.org"',
                     'src="/static/frontend/favicon.svg"', 'alt="diagram"'):
        assert fragment in html, (fragment, html)
    assert executable_parts(html) == []


def test_links_open_without_giving_the_new_page_a_handle_on_this_one():
    html = instructions.render_markdown("[ok](https://a.example/)")
    assert html == '<p><a href="https://a.example/" rel="noopener noreferrer">ok</a></p>'


def test_raw_html_is_shown_as_text():
    html = instructions.render_markdown("<script>alert(1)</script> and <b>not bold</b>")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;b&gt;not bold&lt;/b&gt;" in html


@pytest.mark.django_db
def test_consent_and_instructions_pages_carry_no_executable_markdown():
    vectors = "\n\n".join(XSS_VECTORS.values())
    study = create_study("xss-pages", form=FORM, instructions="# Steps\n\n" + vectors,
                         consent_text="## Consent\n\n" + vectors)
    client = Client()
    client.force_login(make_user("xss-worker", ANNOTATOR))
    consent = client.get(reverse("crowd-work", kwargs={"slug": study.slug})).content.decode()
    assert "<h2>Consent</h2>" in consent and executable_markdown(consent) == []
    client.post(reverse("crowd-work-consent", kwargs={"slug": study.slug}))
    task = client.get(reverse("crowd-work", kwargs={"slug": study.slug})).content.decode()
    assert "<h1>Steps</h1>" in task and executable_markdown(task) == []
    curator = Client()
    curator.force_login(make_user("xss-curator", CURATOR))
    detail = curator.get(reverse("crowd-study-detail", kwargs={"slug": study.slug})).content.decode()
    assert "<h1>Steps</h1>" in detail and executable_markdown(detail) == []
    preview = curator.post(reverse("crowd-markdown-preview"), {"text": vectors}).content.decode()
    assert "<a" in preview and executable_parts(preview) == []
