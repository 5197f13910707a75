"""Who an HTTP caller is: bearer tokens, the file that holds their hashes, and their verifier.

- :mod:`~thoughtledger.api.auth.tokens`: minting tokens and reading/writing the token file
- :mod:`~thoughtledger.api.auth.verifier`: ``FileTokenVerifier``, the MCP SDK's ``TokenVerifier``
(imported
  from there, so the token commands do not load the MCP SDK)
"""

from thoughtledger.api.auth.tokens import (
    TokenFile,
    TokenFileError,
    TokenRecord,
    default_token_path,
    load_tokens,
    load_tokens_or_empty,
    save_tokens,
)

__all__ = [
    "TokenFile",
    "TokenFileError",
    "TokenRecord",
    "default_token_path",
    "load_tokens",
    "load_tokens_or_empty",
    "save_tokens",
]
