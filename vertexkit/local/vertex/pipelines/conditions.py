"""The IR's expressions: a task's `triggerPolicy.condition` and `parameterExpressionSelector`.

The KFP compiler writes conditions in CEL over the task's input parameters
(`inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'heads'`, `int(...) > 5`,
`!(...)`, `&&`, `||`), which the backend's driver evaluates with cel-go
(`backend/src/v2/expression/expression.go`). That subset is translated to a Python expression
here and evaluated with no builtins beyond CEL's conversions.
"""

from __future__ import annotations

import json
import re
from typing import Any

_STRING = re.compile(r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""")
_CEL_FUNCTIONS = {"int": int, "double": float, "string": str, "bool": bool, "size": len}
_KEY = re.compile(r"""\[\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\d+)\s*\]""")


class ConditionError(ValueError):
    """The condition could not be evaluated (its text and the cause are in the message)."""


def evaluate(condition: str, parameters: dict[str, Any]) -> bool:
    """Whether `condition` holds for these input parameter values."""
    literals: list[Any] = []

    def keep(match: re.Match[str]) -> str:
        text = match[1]
        literals.append(json.loads(text) if text.startswith('"') else _single_quoted(text))
        return f" _lit[{len(literals) - 1}] "

    code = _STRING.sub(keep, condition)  # string literals out of the way of the rewrites
    code = code.replace("&&", " and ").replace("||", " or ")
    code = re.sub(r"!(?!=)", " not ", code)
    code = re.sub(r"\btrue\b", "True", code)
    code = re.sub(r"\bfalse\b", "False", code)
    code = re.sub(r"\bnull\b", "None", code)
    code = re.sub(r"inputs\.parameter_values\[\s*_lit\[(\d+)\]\s*\]", r"_input(\1)", code)
    namespace: dict[str, Any] = dict(_CEL_FUNCTIONS)
    namespace["_lit"] = literals
    namespace["_input"] = lambda index: parameters.get(literals[index])
    try:
        return bool(eval(code.strip(), {"__builtins__": {}}, namespace))
    except Exception as exc:
        raise ConditionError(f"condition {condition!r}: {type(exc).__name__}: {exc}") from exc


def _single_quoted(text: str) -> str:
    return text[1:-1].replace("\\'", "'").replace('\\"', '"')


def select(expression: str, value: Any) -> Any:
    """`parseJson(string_value)["a"]`, `struct_value["a"]` and friends: a loop item's field."""
    if "parseJson" in expression and isinstance(value, str):
        value = json.loads(value)
    elif isinstance(value, str) and "string_value" not in expression:
        try:
            value = json.loads(value)
        except ValueError:
            pass
    for key in _KEY.findall(expression):
        index: Any = (
            json.loads(key)
            if key[0] == '"'
            else (_single_quoted(key) if key[0] == "'" else int(key))
        )
        value = value[index]
    return value
