"""jsonschema-rs vs fastjsonschema on toolmesh's own schemas, in one run.

Validates the ``ToolRequest`` wire schema and typical tool input schemas with
valid and invalid instances, and times compilation.  The kernel uses the
winner (see ``toolmesh._pipeline.validation``).

    python bench/schema_validators.py
"""

from __future__ import annotations

import timeit

import fastjsonschema
import jsonschema_rs
from toolmesh.contracts.schemas import wire_schemas

TOOL_INPUT = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1},
        "max_results": {"type": "integer", "minimum": 1, "maximum": 100},
        "tags": {"type": "array", "items": {"type": "string"}},
        "mode": {"enum": ["fast", "exact"]},
        "filters": {
            "type": "object",
            "properties": {"after": {"type": "string"}, "score": {"type": "number"}},
            "additionalProperties": False,
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}
CASES = {
    "tool input, valid": (TOOL_INPUT, {"query": "nats", "max_results": 5, "tags": ["a", "b"], "mode": "fast",
                                       "filters": {"after": "2026", "score": 0.5}}),
    "tool input, invalid": (TOOL_INPUT, {"query": "", "max_results": 500, "tags": [1], "extra": True}),
    "ToolRequest, valid": (wire_schemas()["ToolRequest"], {"id": "abc", "tool": "add",
                                                           "arguments": {"a": 1, "b": 2}, "timeout": 5.0}),
}


def validate_times(schema: dict, instance: object, number: int) -> tuple[float, float]:
    """Best-of-three µs per validation of ``instance`` against ``schema``: jsonschema-rs, then fastjsonschema."""
    rs = jsonschema_rs.validator_for(schema)
    fast = fastjsonschema.compile(schema)

    def with_rs() -> None:
        rs.is_valid(instance)

    def with_fast() -> None:
        try:
            fast(instance)
        except fastjsonschema.JsonSchemaException:
            pass

    t_rs = min(timeit.repeat(with_rs, number=number, repeat=3)) / number * 1e6
    t_fast = min(timeit.repeat(with_fast, number=number, repeat=3)) / number * 1e6
    return t_rs, t_fast


def run(number: int = 20000) -> None:
    print(f"{'case':26} {'jsonschema-rs µs':>17} {'fastjsonschema µs':>18} {'rs/fast':>8}")
    for name, (schema, instance) in CASES.items():
        t_rs, t_fast = validate_times(schema, instance, number)
        print(f"{name:26} {t_rs:17.2f} {t_fast:18.2f} {t_rs / t_fast:8.2f}")
    schema = CASES["tool input, valid"][0]
    c_rs = min(timeit.repeat(lambda: jsonschema_rs.validator_for(schema), number=200, repeat=3)) / 200 * 1e6
    c_fast = min(timeit.repeat(lambda: fastjsonschema.compile(schema), number=200, repeat=3)) / 200 * 1e6
    print(f"{'compile tool input':26} {c_rs:17.1f} {c_fast:18.1f} {c_rs / c_fast:8.2f}")
    invalid = CASES["tool input, invalid"]
    errors_rs = len(list(jsonschema_rs.validator_for(invalid[0]).iter_errors(invalid[1])))
    print(f"issues reported for the invalid input: jsonschema-rs {errors_rs}, fastjsonschema 1 (stops at the first)")


if __name__ == "__main__":
    run()
