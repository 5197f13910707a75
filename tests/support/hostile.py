"""Hypothesis strategies of hostile values: injection text, lone surrogates, absurd numbers."""

from typing import Any

from hypothesis import strategies as st

nasty_text = st.one_of(
    st.text(max_size=50),  # includes lone surrogates and NUL
    st.sampled_from(
        [
            "'; DROP TABLE tl_events; --",
            "../../etc/passwd",
            "..\\..\\windows",
            "\x00",
            "\ud800",
            "%s%s%n",
            "{{7*7}}",
            "",
            " ",
            "a" * 300,
        ]
    ),
)
nested: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | nasty_text,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=20,
)
numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 2**31, 2**63, 1.5, float("nan"), float("inf"), True, "3", "abc"]),
)
values = st.one_of(numbers, nasty_text, st.booleans(), st.none(), nested)
