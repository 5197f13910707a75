"""The JSON Schemas the tools publish, compacted: what a model pays tokens for and needs."""

from typing import Any

JsonSchema = dict[str, Any]


def compact_schema(schema: JsonSchema, *, sorted_keywords: bool = False) -> JsonSchema:
    """Drop what costs tokens and tells a model nothing: titles and ``null`` alternatives.

    Pydantic titles every property after its own name and spells an optional field as
    ``anyOf: [X, null]`` with ``default: null``; an optional field is already one that is not
    ``required``, so the plain ``X`` says the same (and is what the official server publishes).

    Args:
        schema: A JSON Schema, as pydantic generates it.
        sorted_keywords: Keep the keywords of a merged optional field in sorted order, as
            pydantic sorts every other (else the field's own keywords follow its type's).
    """
    compacted: JsonSchema = _compact(schema, sort=sorted_keywords)
    return compacted


def _compact(node: Any, *, sort: bool, names: bool = False) -> Any:
    if isinstance(node, list):
        return [_compact(item, sort=sort) for item in node]
    if not isinstance(node, dict):
        return node
    if names:  # a "properties" or "$defs" mapping: its keys are names, not keywords
        return {key: _compact(value, sort=sort) for key, value in node.items()}
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" or (key == "default" and value is None):
            continue
        result[key] = _compact(value, sort=sort, names=key in ("properties", "$defs"))
    options = result.get("anyOf")
    if isinstance(options, list):
        kept = [option for option in options if option != {"type": "null"}]
        if len(kept) == 1 and len(kept) < len(options):
            del result["anyOf"]
            result = {**kept[0], **result}
            if sort:
                result = dict(sorted(result.items()))
    return result


__all__ = ["JsonSchema", "compact_schema"]
