"""The web view's templates: one Jinja2 environment over ``templates/`` beside this file.

Every page and every fragment the pages share (the card table, a replay step's board, the
ladder's tables) is a template there; the Python modules only read data and build what a
template shows. Autoescape is on for every template, so every string a template prints
(a bot's name, a note, an end reason, an rpc's error) is HTML-escaped unless it is a
fragment rendered by another template (:func:`render` returns it as ``Markup``). A value
for a ``<script>`` goes through ``tojson`` (safe inside the element), a path segment
through the ``path`` filter (percent-encoded, ``/`` included).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup
from starlette.responses import HTMLResponse

FOLDER = Path(__file__).resolve().parent / "templates"


def _path(value: object) -> str:
    """One URL path segment: every reserved character percent-encoded, ``/`` too."""
    return quote(str(value), safe="")


ENV = Environment(
    loader=FileSystemLoader(FOLDER),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    # the templates ship with the package and never change under a running server
    auto_reload=False,
)
ENV.filters["path"] = _path


def render(template: str, /, **context: object) -> Markup:
    """``template`` rendered with ``context``: HTML, safe to print in another template."""
    return Markup(ENV.get_template(template).render(**context))


def page(
    template: str,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
    /,
    **context: object,
) -> HTMLResponse:
    """A whole page (a template extending ``base.html``) as the response."""
    return HTMLResponse(render(template, **context), status_code=status_code, headers=headers)
