"""GEOGRAPHY is not groupable, orderable or comparable in BigQuery (data types page, 'Data type
properties'); DuckDB's GEOMETRY, which stores it locally, is all three. So each place where
BigQuery checks a type for one of these properties gets a check that DuckDB runs while it binds
the statement: before any row is read, as BigQuery refuses a query whatever rows it would see.

The check is the macro `bq_geography_refused(x, message)`: TRUE, unless the type of x holds a
GEOMETRY, when binding fails (`bind_refusal`). `bq_geography_guard(x, message)` is x itself with
that check, for operands.

The messages are ZetaSQL's (google/zetasql: zetasql/analyzer/resolver_query.cc,
analytic_function_resolver.cc, set_operation_resolver_base.cc, resolver_expr.cc and
zetasql/common/builtin_function_internal_*.cc), without the " [at line:column]" BigQuery adds.
Reference: https://cloud.google.com/bigquery/docs/reference/standard-sql/data-types
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from sqlglot import exp

from vertexkit.local.bigquery.bind_refusal import refused_when

MACROS = {
    # (^|[^,(] )GEOMETRY: the type itself, or a STRUCT field's or ARRAY element's type (a field
    # named GEOMETRY follows "(" or ", ").
    "bq_geography_refused(x, message)": refused_when(
        "regexp_matches(typeof(x), '(^|[^,(] )GEOMETRY')", "message"
    ),
    "bq_geography_guard(x, message)": "CASE WHEN bq_geography_refused(x, message) THEN x END",
}


def _not_defined(operation: str) -> str:
    return f"{operation} is not defined for arguments of type GEOGRAPHY"


GROUP_BY = "Grouping by expressions of type GEOGRAPHY is not allowed"
ORDER_BY = "ORDER BY does not support expressions of type GEOGRAPHY"
PARTITION_BY = "Partitioning by expressions of type GEOGRAPHY is not allowed"
WINDOW_ORDER_BY = "Ordering by expressions of type GEOGRAPHY is not allowed"
DISTINCT_ARGUMENT = (
    "Aggregate functions with DISTINCT cannot be used with arguments of type GEOGRAPHY"
)
# Operators and functions that need their arguments comparable: ZetaSQL's name for each.
COMPARISONS: dict[type[exp.Expression], str] = {
    exp.EQ: "Equality",
    exp.NEQ: "Inequality",
    exp.LT: "Less than",
    exp.LTE: "Less than",
    exp.GT: "Greater than",
    exp.GTE: "Greater than",
    exp.NullSafeEQ: "Grouping",  # IS NOT DISTINCT FROM
    exp.NullSafeNEQ: "Grouping",  # IS DISTINCT FROM
    exp.Between: "BETWEEN",
    exp.In: "IN",
    exp.Nullif: "NULLIF",
    exp.Case: "Equality",  # CASE value WHEN ...
    exp.Greatest: "GREATEST",
    exp.Least: "LEAST",
    exp.Min: "MIN",
    exp.Max: "MAX",
}
SET_OPERATIONS = (exp.Union, exp.Intersect, exp.Except)
# Types that the catalog or the query text may give an operand and that are never GEOGRAPHY.
SCALAR_TYPES = {
    "INT64", "FLOAT64", "NUMERIC", "BIGNUMERIC", "BOOL", "STRING", "BYTES", "DATE", "DATETIME",
    "TIME", "TIMESTAMP", "JSON", "INTERVAL",
}  # fmt: skip
NEVER_GEOGRAPHY = (
    exp.Literal, exp.Null, exp.Boolean, exp.Predicate, exp.Connector, exp.Not, exp.Add, exp.Sub,
    exp.Mul, exp.Div, exp.IntDiv, exp.Mod, exp.DPipe, exp.Neg, exp.Interval, exp.Star,
)  # fmt: skip

# Where `=` or IN is syntax: UPDATE ... SET column = value, SET variable = value, UNPIVOT's IN.
SYNTAX_NOT_COMPARISON = (exp.Update, exp.SetItem, exp.Pivot, exp.Property)

StaticType = Callable[[exp.Expression], str | None]


def check(statement: exp.Expression, static_type: StaticType) -> None:
    """Adds the checks to every clause of `statement` that BigQuery type-checks. Runs after
    googlesql.name_columns (every select item is named) and before the function rewrites (which
    then rewrite the copies made here as they do the originals)."""
    found: dict[type, list[exp.Expression]] = {}
    for node in statement.walk():  # one walk: this runs on every statement
        found.setdefault(type(node), []).append(node)
    for select in found.get(exp.Select, []):
        _name_distinct_order_terms(select)
        _check_group_by(select)  # BigQuery checks GROUP BY, then DISTINCT, then ORDER BY
        _check_distinct(select)
        _check_order_by(select)
        _check_using(select)
    for kind in SET_OPERATIONS:
        for operation in found.get(kind, []):
            _check_set_operation(operation)
    for kind, message in COMPARISONS.items():
        for node in found.get(kind, []):
            _check_comparison(node, message, static_type)
    for window in found.get(exp.Window, []):
        for key in list(window.args.get("partition_by") or []):
            _guard(key, PARTITION_BY)
    for ordered in found.get(exp.Ordered, []):
        _check_ordered(ordered)
    for distinct in found.get(exp.Distinct, []):
        if isinstance(distinct.parent, exp.AggFunc):  # COUNT(DISTINCT ...)
            for argument in list(distinct.expressions):
                _guard(argument, DISTINCT_ARGUMENT)


# -- the checks' two shapes --------------------------------------------------------------------
def _refused(node: exp.Expression, message: str) -> exp.Expression:
    return exp.Anonymous(
        this="bq_geography_refused", expressions=[node.copy(), exp.Literal.string(message)]
    )


def _guard(node: exp.Expression, message: str) -> None:
    """`node` becomes itself with the check (same value, same column name)."""
    _guarded(node, message)


def _guarded(node: exp.Expression, message: str) -> exp.Expression:
    """The check put in `node`'s place, around `node` (moved, not copied: cheaper)."""
    guard = exp.Anonymous(this="bq_geography_guard")
    node.replace(guard)
    guard.set("expressions", [node, exp.Literal.string(message)])
    return guard


def _where(select: exp.Select, checks: list[exp.Expression]) -> None:
    """Checks of expressions over the FROM clause: conditions that are always TRUE."""
    if checks:
        select.where(exp.and_(*checks), append=True, copy=False)


# -- clauses -----------------------------------------------------------------------------------
def _items(select: exp.Select) -> list[exp.Expression]:
    return list(select.expressions)


def _item_value(item: exp.Expression) -> exp.Expression:
    return item.this if isinstance(item, exp.Alias) else item


def _item_named(select: exp.Select, name: str) -> exp.Expression | None:
    for item in _items(select):
        if not _is_star(item) and item.alias_or_name.lower() == name.lower():
            return item
    return None


def _ordinal(node: exp.Expression) -> int | None:
    if isinstance(node, exp.Literal) and node.is_int:
        return int(node.this)
    return None


def _output_item(select: exp.Select, reference: exp.Expression) -> exp.Expression | None:
    """The select item an ORDER BY / GROUP BY term names by position or by alias, if any."""
    ordinal = _ordinal(reference)
    items = _items(select)
    if ordinal is not None:
        return items[ordinal - 1] if 0 < ordinal <= len(items) else None
    if isinstance(reference, exp.Column) and not reference.table:
        return _item_named(select, reference.name)  # an alias names the item (BigQuery)
    return None


def _guard_item(item: exp.Expression, message: str) -> None:
    """A select item with the check, keeping its name."""
    if _is_star(item):
        return  # checked in WHERE by _star_checks
    if isinstance(item, exp.Alias):
        _guard(item.this, message)
    else:
        name = item.alias_or_name
        guard = _guarded(item, message)
        guard.replace(exp.alias_(guard.copy(), name, copy=False))


def _star_checks(select: exp.Select, message: str) -> list[exp.Expression]:
    """`*` (with EXCEPT) stands for FROM columns: DuckDB's COLUMNS(*) checks each in WHERE."""
    return [
        _refused(exp.Anonymous(this="COLUMNS", expressions=[item.copy()]), message)
        for item in _items(select)
        if _is_star(item)
    ]


def _is_star(item: exp.Expression) -> bool:
    """`*` or `t.*`."""
    return isinstance(item, exp.Star) or (
        isinstance(item, exp.Column) and isinstance(item.this, exp.Star)
    )


def _check_order_by(select: exp.Select) -> None:
    order = select.args.get("order")
    if not order:
        return
    for ordered in order.expressions:
        item = _output_item(select, ordered.this)
        if item is not None:
            _guard_item(item, ORDER_BY)
        elif _ordinal(ordered.this) is None:
            _guard(ordered.this, ORDER_BY)


def _name_distinct_order_terms(select: exp.Select) -> None:
    """Under SELECT DISTINCT an ORDER BY term repeats a select item: it becomes the item's name,
    so that checking the item (which changes its expression) keeps DuckDB's match."""
    order = select.args.get("order")
    if select.args.get("distinct") is None or not order:
        return
    for ordered in order.expressions:
        for item in _items(select):
            if not _is_star(item) and _item_value(item) == ordered.this:
                ordered.set("this", exp.column(item.alias_or_name))
                break


def _check_group_by(select: exp.Select) -> None:
    group = select.args.get("group")
    if not group:
        return
    if group.args.get("all"):
        keys = [
            _item_value(item)
            for item in _items(select)
            if not _is_star(item) and not item.find(exp.AggFunc, exp.Window)
        ]
    else:
        keys = [_grouped(select, key) for key in _group_keys(group)]
    _where(select, [_refused(key, GROUP_BY) for key in keys if key is not None])


def _group_keys(group: exp.Group) -> Iterator[exp.Expression]:
    for key in group.expressions:
        if isinstance(key, (exp.Rollup, exp.Cube, exp.GroupingSets)):
            for inner in key.expressions:
                yield from inner.expressions if isinstance(inner, exp.Tuple) else [inner]
        else:
            yield key
    for key_set in ("rollup", "cube", "grouping_sets"):
        for node in group.args.get(key_set) or []:
            yield from node.expressions


def _grouped(select: exp.Select, key: exp.Expression) -> exp.Expression | None:
    """The expression a GROUP BY term groups by: a select item's for an ordinal or an alias."""
    item = _output_item(select, key)
    if item is None:
        return None if _ordinal(key) is not None else key
    value = _item_value(item)
    return None if value.find(exp.AggFunc, exp.Window) else value


def _check_distinct(select: exp.Select) -> None:
    distinct = select.args.get("distinct")
    if distinct is None or distinct.args.get("on"):
        return
    _where(select, _star_checks(select, _distinct_message("(of *)")))
    for position, item in enumerate(_items(select), start=1):
        if not _is_star(item):
            _guard_item(item, _distinct_message(_column_label(item, position)))


def _distinct_message(column: str) -> str:
    return f"Column {column} of type GEOGRAPHY cannot be used in SELECT DISTINCT"


def _column_label(item: exp.Expression, position: int) -> str:
    """The item's alias, or its position for the name BigQuery gave it (f0_, ...)."""
    name = item.alias_or_name
    return str(position) if re.fullmatch(r"f\d+_", name) else name


def _check_using(select: exp.Select) -> None:
    checks = []
    for join in select.args.get("joins") or []:
        right = join.this.alias_or_name if isinstance(join.this, (exp.Table, exp.Subquery)) else ""
        for key in join.args.get("using") or []:
            column = exp.column(key.name, table=right or None)
            message = (
                f"Column '{key.name}' in USING has types that do not support equality "
                "comparison: GEOGRAPHY"
            )
            checks.append(_refused(column, message))
    _where(select, checks)


def _check_set_operation(operation: exp.Expression) -> None:
    """UNION DISTINCT, INTERSECT and EXCEPT compare whole rows: each leaf's columns."""
    if isinstance(operation, exp.Union) and not operation.args.get("distinct"):
        _check_set_order_by(operation)
        return
    name = f"{type(operation).__name__.upper()} DISTINCT"
    for leaf in _leaves(operation):
        for position, item in enumerate(_items(leaf), start=1):
            _guard_item(item, _set_message(str(position), name))
        _where(leaf, _star_checks(leaf, _set_message("(of *)", name)))
    _check_set_order_by(operation)


def _set_message(column: str, operation: str) -> str:
    return (
        f"Column {column} in {operation} has type that does not support set operation "
        "comparisons: GEOGRAPHY"
    )


def _leaves(node: exp.Expression) -> Iterator[exp.Select]:
    if isinstance(node, exp.Select):
        yield node
    elif isinstance(node, exp.Subquery):
        yield from _leaves(node.this)
    elif isinstance(node, SET_OPERATIONS):
        yield from _leaves(node.this)
        yield from _leaves(node.expression)


def _check_set_order_by(operation: exp.Expression) -> None:
    """ORDER BY after a set operation names its output columns: the first leaf's items."""
    order = operation.args.get("order")
    if not order:
        return
    first = next(_leaves(operation), None)
    for ordered in order.expressions:
        item = _output_item(first, ordered.this) if first is not None else None
        if item is not None:
            _guard_item(item, ORDER_BY)


# -- operands ------------------------------------------------------------------------------------
def _may_be_geography(node: exp.Expression, static_type: StaticType) -> bool:
    if isinstance(node, NEVER_GEOGRAPHY):
        return False
    if isinstance(node, exp.Anonymous) and node.name.startswith("bq_geography_"):
        return False  # checked already
    return static_type(node) not in SCALAR_TYPES


def _operands(node: exp.Expression) -> list[exp.Expression]:
    if isinstance(node, exp.Case):
        return [node.this] if node.this else []
    if isinstance(node, exp.In):
        return [node.this]  # the list's values or the subquery's column: the same type
    if isinstance(node, exp.Between):
        return [node.this, node.args["low"], node.args["high"]]
    if isinstance(node, (exp.Min, exp.Max)):
        return [node.this]
    return [node.this, *([node.expression] if node.expression else []), *node.expressions]


def _check_comparison(node: exp.Expression, operation: str, static_type: StaticType) -> None:
    if isinstance(node.parent, SYNTAX_NOT_COMPARISON):
        return
    message = _not_defined(operation)
    if isinstance(node, exp.In) and node.args.get("query"):
        message = "Cannot execute IN subquery with uncomparable types GEOGRAPHY"
    for operand in _operands(node):
        if isinstance(operand, exp.Expression) and _may_be_geography(operand, static_type):
            _guard(operand, message)


def _check_ordered(ordered: exp.Ordered) -> None:
    """ORDER BY in OVER (...) and in an aggregate (ARRAY_AGG(x ORDER BY y)); a query's own ORDER
    BY is _check_order_by's."""
    order = ordered.parent
    owner = order.parent if isinstance(order, exp.Order) else None
    if isinstance(owner, exp.Window):
        _guard(ordered.this, WINDOW_ORDER_BY)
    elif owner is not None and not isinstance(owner, (exp.Select, *SET_OPERATIONS)):
        _guard(ordered.this, ORDER_BY)
