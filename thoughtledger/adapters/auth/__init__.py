"""Who an HTTP caller is: bearer tokens, the file that holds their hashes, and their verifier.

- :mod:`~thoughtledger.adapters.auth.tokens`: minting tokens and reading/writing the token file
- :mod:`~thoughtledger.adapters.auth.private_files`: refusing a token file another user could change
- :mod:`~thoughtledger.adapters.auth.verifier`: ``FileTokenVerifier``, the MCP SDK's
``TokenVerifier``
  over the token file
- :mod:`~thoughtledger.adapters.auth.issuer`: ``IssuerTokenVerifier``, the same for JWT access
tokens
  of an OAuth issuer, whose keys :mod:`~thoughtledger.adapters.auth.jwks` fetches

The verifiers are imported from their modules, so the token commands do not load the MCP SDK.
"""

from thoughtledger.adapters.auth.private_files import SharedFileError, check_not_shared
from thoughtledger.adapters.auth.tokens import (
    TokenFile,
    TokenFileError,
    TokenRecord,
    default_token_path,
    load_tokens,
    load_tokens_or_empty,
    save_tokens,
)

__all__ = [
    "SharedFileError",
    "TokenFile",
    "TokenFileError",
    "TokenRecord",
    "check_not_shared",
    "default_token_path",
    "load_tokens",
    "load_tokens_or_empty",
    "save_tokens",
]
