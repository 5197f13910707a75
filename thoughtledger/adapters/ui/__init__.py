"""The ledger in a browser: ``thoughtledger ui`` (a read-only web app) and ``export --html``."""
