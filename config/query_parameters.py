"""The API refuses query parameters it does not document: a 400 that names them (a misspelt filter,
`?stauts=done`, would otherwise be ignored and the whole list returned as if it had matched).

What an operation takes is what the API's own schema lists for it (`config.api_schema`: its filters, `page`
on a paginated list, `format` where it renders more than JSON), so the schema and the refusal cannot drift
apart, and a new operation is covered as soon as it exists. `format` (DRF's way to pick a renderer; an
unknown one is a 404) is taken everywhere. The schema is built once per process, on the first request
that needs it.
"""

from functools import lru_cache

from drf_spectacular.generators import SchemaGenerator
from rest_framework.settings import api_settings

from config.api_errors import ErrorSerializer

ALWAYS_TAKEN = frozenset({api_settings.URL_FORMAT_OVERRIDE})
ERROR_KEYS = frozenset(ErrorSerializer().fields)  # the error body's own keys are no parameter's messages


@lru_cache(maxsize=1)
def documented_parameters() -> dict:
    """{(the route's view function, HTTP method): the names of the query parameters the schema lists}."""
    generator = SchemaGenerator()
    paths = generator.get_schema(request=None, public=True)["paths"]
    found = {}
    for path, _regex, method, callback in generator.endpoints:
        view = generator.create_view(callback, method)
        operation = paths.get(generator.coerce_path(path, method, view), {}).get(method.lower())
        if operation is not None:
            found[(callback, method)] = frozenset(
                parameter["name"] for parameter in operation.get("parameters", []) if parameter["in"] == "query")
    return found


def refusal(view_func, method: str, names) -> dict | None:
    """The error body for a request to `view_func` whose query names parameters its operation does not take;
    None when it names none (or the route is no operation of the schema)."""
    view_func = getattr(view_func, "unsuffixed", view_func)  # a format-suffix route (`config.api_routes`)
    taken = documented_parameters().get((view_func, "GET" if method == "HEAD" else method))
    unknown = sorted(set(names) - taken - ALWAYS_TAKEN) if taken is not None else []
    if not unknown:
        return None
    listed = ", ".join(f"'{name}'" for name in unknown)
    offer = f"it takes {', '.join(sorted(taken))}" if taken else "it takes none"
    body = {"error": f"Unknown query parameter{'s' if len(unknown) > 1 else ''} {listed}: {offer}."}
    body.update({name: ["Unknown query parameter."] for name in unknown if name not in ERROR_KEYS})
    return body
