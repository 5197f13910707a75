"""Files the type-check stage reads as a user's project would: each expected refusal is a
``# type: ignore[code]`` that mypy --strict reports as unused the day it is no longer refused."""
