"""Changes to the Content-Security-Policy (settings.CONTENT_SECURITY_POLICY, sent by django-csp's middleware)
for the responses that need more than the platform's own pages.

A view that always needs a change is decorated with django-csp's `csp_update` (adds sources) or `csp_replace`
(replaces a directive); `replace_directives` does what `csp_replace` does for a response chosen while the view
runs. The policies below are the ones used in more than one place.
"""

from csp.constants import SELF, UNSAFE_INLINE

# Third-party pages served as they come (Swagger UI's and Redoc's bundles, matplotlib's SVG) set styles inline;
# scripts stay limited to this site's files.
INLINE_STYLES = {"style-src": [SELF, UNSAFE_INLINE]}
# Redoc starts a web worker from a blob: URL; Swagger UI's and Redoc's style sheets draw icons from data: URLs.
API_DOCS = {**INLINE_STYLES, "img-src": [SELF, "data:"], "worker-src": [SELF, "blob:"]}


def replace_directives(response, directives: dict):
    """The response with these directives replacing the settings' ones (django-csp's `csp_replace`, per response)."""
    response._csp_replace = {**(getattr(response, "_csp_replace", None) or {}), **directives}
    return response
