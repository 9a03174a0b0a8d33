"""A JSON Schema validator for exactly the subset ``protocol/v1.schema.json``
uses, so these tests hold every line the package writes to the committed
schema without a third-party validator. An unknown keyword is refused, so
the schema cannot grow past what this checks."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional

SCHEMA_PATH = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "protocol", "v1.schema.json"
)

_KNOWN = {
    "$schema", "title", "description", "$defs", "$ref", "type", "const", "enum",
    "properties", "required", "additionalProperties", "items", "minItems",
    "uniqueItems", "minimum", "minLength", "maxLength", "oneOf", "$comment",
}


def _has_type(value: Any, expected: str) -> bool:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return {
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
        "integer": number and float(value).is_integer(),
        "number": number,
        "null": value is None,
    }[expected]


def _same(left: Any, right: Any) -> bool:
    """JSON equality: a boolean is never a number."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    return bool(left == right)


class Schema:
    """The committed protocol schema."""

    def __init__(self, path: str = SCHEMA_PATH) -> None:
        with open(path, encoding="utf-8") as handle:
            self._root = json.load(handle)

    def validate(self, definition: str, value: Any) -> Optional[str]:
        """``None`` when ``value`` validates against ``#/$defs/<definition>``,
        otherwise where and which keyword failed."""
        return self._check(self._root["$defs"][definition], value, "")

    def _resolve(self, reference: str) -> Dict[str, Any]:
        node: Dict[str, Any] = self._root
        for part in reference.lstrip("#/").split("/"):
            node = node[part]
        return node

    def _check(self, schema: Dict[str, Any], value: Any, at: str) -> Optional[str]:
        unknown = set(schema) - _KNOWN
        assert not unknown, f"unsupported keywords {unknown}"

        def fail(why: str) -> str:
            return f"{at or '/'}: {why}"

        if "$ref" in schema:
            problem = self._check(self._resolve(schema["$ref"]), value, at)
            if problem:
                return problem
        if "type" in schema and not _has_type(value, schema["type"]):
            return fail(f"type {schema['type']}")
        if "const" in schema and not _same(value, schema["const"]):
            return fail(f"const {schema['const']}")
        if "enum" in schema and not any(_same(value, option) for option in schema["enum"]):
            return fail("enum")
        if "minimum" in schema and _has_type(value, "number") and value < schema["minimum"]:
            return fail("minimum")
        if isinstance(value, str):
            if len(value) < schema.get("minLength", 0):
                return fail("minLength")
            if "maxLength" in schema and len(value) > schema["maxLength"]:
                return fail("maxLength")
        if isinstance(value, list):
            if len(value) < schema.get("minItems", 0):
                return fail("minItems")
            if schema.get("uniqueItems") and any(value[i] in value[:i] for i in range(len(value))):
                return fail("uniqueItems")
            if "items" in schema:
                for i, item in enumerate(value):
                    problem = self._check(schema["items"], item, f"{at}/{i}")
                    if problem:
                        return problem
        if isinstance(value, dict):
            properties = schema.get("properties", {})
            extra = schema.get("additionalProperties")
            for name, member in value.items():
                if name in properties:
                    problem = self._check(properties[name], member, f"{at}/{name}")
                elif extra is False:
                    problem = fail(f"additional property {name}")
                elif isinstance(extra, dict):
                    problem = self._check(extra, member, f"{at}/{name}")
                else:
                    problem = None
                if problem:
                    return problem
            for name in schema.get("required", []):
                if name not in value:
                    return fail(f"required {name}")
        if "oneOf" in schema:
            results: List[Optional[str]] = [self._check(option, value, at) for option in schema["oneOf"]]
            matched = sum(1 for result in results if result is None)
            if matched == 0:
                return next((r for r in results if r and ": const " not in r), results[0])
            if matched > 1:
                return fail(f"oneOf matched {matched} alternatives")
        return None
