"""Data embedded in the HTML export: no text can end its script element, and it reads back."""

import base64
import hashlib
import json
import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from thoughtledger.adapters.ui.export import html_export
from thoughtledger.adapters.ui.payload import script_json

HOSTILE = st.sampled_from(
    ["</script>", "<script>alert(1)</script>", "<!--", "-->", "]]>", "\u2028", "\u2029", "&amp;"]
)
TEXT = st.lists(st.one_of(HOSTILE, st.text()), max_size=6).map("".join)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)


@given(JSON)
def test_embedded_json_has_no_markup_characters_and_reads_back(data: Any) -> None:
    text = script_json([data])
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(text) == [data]


@given(st.lists(TEXT, min_size=1, max_size=4))
def test_the_export_holds_one_script_its_policy_allows_and_the_data_intact(
    thoughts: list[str],
) -> None:
    payload = {
        "sessionId": "s-1",
        "events": [{"v": n + 1, "k": "thought.recorded", "x": x} for n, x in enumerate(thoughts)],
    }
    page = html_export([payload], title="</title><script>alert(1)</script>")
    # Exactly the two script elements written: the data (not run) and the view's code.
    assert page.count("</script>") == 2
    data = re.search(r'<script type="application/json" id="tl-data">(.*?)</script>', page, re.S)
    assert data is not None
    assert json.loads(data.group(1)) == [payload]
    code = re.search(r"<script>(.*?)</script>", page, re.S)
    assert code is not None
    digest = base64.b64encode(hashlib.sha256(code.group(1).encode()).digest()).decode()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert policy is not None
    assert f"script-src &#x27;sha256-{digest}&#x27;" in policy.group(1)
    assert "<title>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>" in page
