"""Safe evaluation of a calculation's formula: letters for figures, numbers, + - * / and parentheses.

The model writes the formula; code evaluates it, so the arithmetic a 1.5B model gets wrong is done by
Python. Nothing but these operators is accepted (no names beyond the figures' letters, no calls)."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Mapping

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}
MAX_FORMULA_CHARS = 200


class FormulaError(ValueError):
    """The formula cannot be evaluated; the message says why."""


def normalise_formula(text: str) -> str:
    """Model spellings brought to Python's: × ÷ − and full-width brackets; a trailing "= ..." dropped."""
    text = text.translate(str.maketrans({"×": "*", "÷": "/", "−": "-", "–": "-", "（": "(", "）": ")", "x": "*"}))
    return text.split("=")[0].strip().rstrip(".。")


def _nodes(formula: str) -> list[ast.AST]:
    """Every node of the formula's syntax tree; none when it does not parse."""
    try:
        return list(ast.walk(ast.parse(normalise_formula(formula), mode="eval")))
    except SyntaxError:
        return []


def letters(formula: str) -> set[str]:
    """The figure letters a formula uses."""
    return {n.id for n in _nodes(formula) if isinstance(n, ast.Name)}


def evaluate(formula: str, values: Mapping[str, float]) -> float:
    """The formula's value over `values` (letter -> number). Raises FormulaError."""
    text = normalise_formula(formula)
    if not text or len(text) > MAX_FORMULA_CHARS:
        raise FormulaError("the formula is empty or too long")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise FormulaError(f"the formula {text!r} is not arithmetic") from exc

    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
            return float(node.value)
        if isinstance(node, ast.Name):
            if node.id not in values:
                raise FormulaError(f"the formula uses {node.id}, which is not one of the figures")
            return values[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.Div) and right == 0:
                raise FormulaError("the formula divides by zero")
            return _BINARY[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](walk(node.operand))
        raise FormulaError(f"the formula {text!r} uses something other than + - * / and parentheses")

    result = walk(tree)
    if not math.isfinite(result):
        raise FormulaError("the formula's value is not finite")
    return result


def _divisions(formula: str) -> list[ast.BinOp]:
    return [n for n in _nodes(formula) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)]


def divides(formula: str) -> bool:
    """The formula divides somewhere (by a figure or by a number)."""
    return bool(_divisions(formula))


def is_ratio(formula: str) -> bool:
    """A division by a figure (a ratio or a growth rate), not a sum or difference of figures. A division
    by a number alone ("(A + B + C) / 3", an average) is not one: it keeps the figures' unit."""
    return any(any(isinstance(m, ast.Name) for m in ast.walk(d.right)) for d in _divisions(formula))


def scales_by_100(formula: str) -> bool:
    """The formula multiplies by 100, as a percentage does."""
    text = normalise_formula(formula).replace(" ", "")
    return "*100" in text or "100*" in text


def is_percent_scaled(formula: str) -> bool:
    """A ratio multiplied by 100 (the result is a percentage)."""
    return is_ratio(formula) and scales_by_100(formula)
