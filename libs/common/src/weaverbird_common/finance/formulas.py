"""Safe arithmetic over named inputs: the metric library's expressions, never Python's eval."""

from __future__ import annotations

import ast
import operator
from collections.abc import Mapping

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def evaluate(expression: str, values: Mapping[str, float]) -> float:
    """The value of expression (+ - * / parentheses, numbers, names); ZeroDivisionError / KeyError pass up."""

    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.Name):
            return float(values[node.id])
        raise ValueError(f"not allowed in a formula: {ast.dump(node)[:60]}")

    return walk(ast.parse(expression, mode="eval"))


def names(expression: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(expression, mode="eval")) if isinstance(n, ast.Name)}
