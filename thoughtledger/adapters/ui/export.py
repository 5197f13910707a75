"""``export --html``: sessions as one self-contained HTML file, the session page offline.

The file holds the stylesheet, the session view's scripts (joined in load order into one
script element) and the sessions' events (as JSON in a ``<script type="application/json">``
element, escaped so no text can close it). Its Content-Security-Policy allows that one script
by its SHA-256 and nothing else: no other script, no network.
"""

import base64
import hashlib
import html
from collections.abc import Sequence

from thoughtledger.adapters.ui.payload import JsonDict, script_json
from thoughtledger.adapters.ui.routes import SESSION_SCRIPTS, static_text


def _sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def html_export(sessions: Sequence[JsonDict], *, title: str) -> str:
    """The page for ``sessions`` (each a :func:`thoughtledger.adapters.ui.payload.session_payload`).

    Args:
        sessions: The sessions to show, in order.
        title: The page's title (escaped here).

    Returns:
        The whole HTML document.
    """
    # One script, not one per file: the page keeps a single hash in its policy, and the files
    # run in the order the served page loads them.
    script = "\n".join(static_text(name) for name in SESSION_SCRIPTS)
    style = static_text("app.css")
    policy = (
        f"default-src 'none'; script-src 'sha256-{_sha256(script)}'; "
        f"style-src 'sha256-{_sha256(style)}'; img-src data:; base-uri 'none'; "
        "form-action 'none'"
    )
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>{style}</style>\n"
        "</head>\n<body>\n"
        '<header class="bar"><span class="brand">thoughtledger</span>'
        '<span class="muted">exported session · ← / → move through versions</span></header>\n'
        '<main id="main" tabindex="-1"></main>\n'
        f'<script type="application/json" id="tl-data">{script_json(list(sessions))}</script>\n'
        f"<script>{script}</script>\n"
        "</body>\n</html>\n"
    )


__all__ = ["html_export"]
