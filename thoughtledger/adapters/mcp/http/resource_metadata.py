"""OAuth 2.0 Protected Resource Metadata (RFC 9728) of ``serve --http`` with authentication.

An MCP client that gets 401 reads ``WWW-Authenticate: Bearer resource_metadata="..."`` (the SDK
names the URL) and fetches this document to learn which authorization server issues tokens for
the server and which scopes it knows. It is served at the path-suffixed URL RFC 9728 section
3.1 gives for ``/mcp`` (``/.well-known/oauth-protected-resource/mcp``) and at the bare
``/.well-known/oauth-protected-resource``, which clients of earlier drafts ask.

The SDK's own route advertises the server itself as the authorization server when tokens come
from the token file, though it issues none and serves no authorization-server metadata; with
the token file this document names no authorization server (the member is optional), and with
``--auth-issuer`` it names the issuer.
"""

from collections.abc import Sequence
from urllib.parse import urlsplit

from mcp.server.auth.routes import cors_middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from thoughtledger.api import ROLES, SCOPE_PREFIX

WELL_KNOWN = "/.well-known/oauth-protected-resource"


def metadata_document(resource: str, authorization_servers: Sequence[str]) -> dict[str, object]:
    """The metadata of the protected resource ``resource`` (the served MCP URL).

    Args:
        resource: The MCP endpoint's URL; tokens are for it (their audience, RFC 8707).
        authorization_servers: The issuers whose tokens it accepts (none: the token file).
    """
    document: dict[str, object] = {"resource": resource}
    if authorization_servers:
        document["authorization_servers"] = list(authorization_servers)
    document["bearer_methods_supported"] = ["header"]
    document["scopes_supported"] = [SCOPE_PREFIX + role for role in ROLES]
    document["resource_name"] = "thoughtledger"
    return document


def metadata_routes(resource: str, authorization_servers: Sequence[str]) -> list[Route]:
    """The routes serving :func:`metadata_document`, readable from any web page (CORS ``*``)."""
    document = metadata_document(resource, authorization_servers)

    async def handle(request: Request) -> Response:
        return JSONResponse(document, headers={"Cache-Control": "public, max-age=3600"})

    paths = dict.fromkeys((WELL_KNOWN + urlsplit(resource).path.rstrip("/"), WELL_KNOWN))
    return [
        Route(
            path, endpoint=cors_middleware(handle, ["GET", "OPTIONS"]), methods=["GET", "OPTIONS"]
        )
        for path in paths
    ]


__all__ = ["WELL_KNOWN", "metadata_document", "metadata_routes"]
