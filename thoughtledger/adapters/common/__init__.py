"""What several adapters share, and nothing that decides who may see what.

Origins and loopback names, logging set-up, option types, JSON schema helpers and the hardened
HTTP server. Visibility is the API's access door (:mod:`thoughtledger.api.access`).
"""
