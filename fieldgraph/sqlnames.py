"""How each SQL engine names an output column written without an alias (``SELECT sum(x)``): Spark ``sum(x)``,
Hive ``_c0``, Trino ``_col0``, BigQuery ``f0_``, Postgres ``sum``, Snowflake the upper-cased text, ... So the edges
:mod:`fieldgraph.sqllineage` derives point at the column the engine creates (docs/how-to/sql.md, "Output column
names"). One naming function per engine; ``index`` is the output's place in its SELECT list (0-based), ``unnamed``
how many outputs before it had no name of their own. Pure: sqlglot trees in, names out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias, cast

from sqlglot import exp


def _expression_text(e: exp.Expression, dialect: str, *, parens: bool, qualifiers: bool,
                     count_star: exp.Expression | None = None) -> str:
    """The expression as the engine prints it: functions lower-case, binary operations in parentheses (``parens``:
    Spark, DuckDB), table qualifiers dropped unless ``qualifiers``, ``count(*)`` as ``count_star``."""
    e = e.copy()
    if not qualifiers:
        for col in e.find_all(exp.Column):
            for part in ("table", "db", "catalog"):
                col.set(part, None)
    if count_star is not None:
        if isinstance(e, exp.Count) and isinstance(e.this, exp.Star):
            e = count_star.copy()
        for count in [c for c in e.find_all(exp.Count) if isinstance(c.this, exp.Star)]:
            count.replace(count_star.copy())
    if parens:
        for b in [b for b in e.find_all(exp.Binary) if not isinstance(b, exp.Dot)]:
            if not isinstance(b.parent, exp.Paren):
                wrapped = exp.Paren()
                b.replace(wrapped)
                wrapped.set("this", b)
        if isinstance(e.parent, exp.Paren):  # the top-level operation wrapped above
            e = e.parent
    if isinstance(e, exp.Literal) and e.is_string:
        return str(e.this)
    return e.sql(dialect=dialect, normalize_functions="lower")


def _postgres_name(e: exp.Expression, index: int, unnamed: int) -> str:
    """Postgres's FigureColname: a function's name, a cast's operand (else its type), ``case``, a scalar subquery's
    first column; anything else ``?column?``."""
    while isinstance(e, exp.Paren):
        e = e.this
    if isinstance(e, (exp.Column, exp.Dot)) and e.output_name:
        return e.output_name.lower()
    if isinstance(e, exp.Cast):
        inner = _postgres_name(e.this, index, unnamed)
        return inner if inner != "?column?" else e.to.sql(dialect="postgres").lower()
    if isinstance(e, exp.Case):
        return "case"
    if isinstance(e, exp.Subquery) and isinstance(e.this, exp.Select) and e.this.selects:
        first = cast(exp.Expression, e.this.selects[0])
        return first.output_name.lower() if isinstance(first, exp.Alias) else _postgres_name(first, 0, 0)
    if isinstance(e, exp.Anonymous):
        return e.name.lower()
    if isinstance(e, exp.Func):
        return e.sql_name().lower()
    return "?column?"


#: how an engine names an output written without a name: (the expression, its place, unnamed outputs before it)
_Namer: TypeAlias = Callable[[exp.Expression, int, int], str]


def _spark_name(e: exp.Expression, index: int, unnamed: int) -> str:
    """Spark's: the expression as Spark prints it (no table qualifiers, ``count(*)`` as ``count(1)``); a scalar
    subquery ``scalarsubquery()``."""
    if isinstance(e, exp.Subquery):
        return "scalarsubquery()"
    return _expression_text(e, "spark", parens=True, qualifiers=False, count_star=exp.Count(this=exp.Literal.number(1)))


def _text_name(dialect: str, *, upper: bool = False, spaces: bool = True) -> _Namer:
    """Engines that name an output by its text (MySQL, SQLite; upper-cased: Snowflake, Oracle without spaces)."""
    def name(e: exp.Expression, index: int, unnamed: int) -> str:
        text = _expression_text(e, dialect, parens=False, qualifiers=True)
        text = text.upper() if upper else text
        return text if spaces else text.replace(" ", "")
    return name


_TRINO: _Namer = lambda e, i, n: f"_col{i}"  # noqa: E731
#: dialect -> how its engine names an output written without an alias (docs/how-to/sql.md, "Output column names");
#: any other dialect: the expression's text as sqlglot writes it (:func:`_text_name`)
OUTPUT_NAMERS: dict[str, _Namer] = {
    "spark": _spark_name, "spark2": _spark_name, "databricks": _spark_name,
    "hive": lambda e, i, n: f"_c{i}",
    "trino": _TRINO, "presto": _TRINO, "athena": _TRINO,
    "bigquery": lambda e, i, n: f"f{n}_",
    "postgres": _postgres_name, "redshift": _postgres_name,
    "snowflake": _text_name("snowflake", upper=True), "oracle": _text_name("oracle", upper=True, spaces=False),
    "duckdb": lambda e, i, n: _expression_text(e, "duckdb", parens=True, qualifiers=True,
                                               count_star=exp.Anonymous(this="count_star")),
    "mysql": _text_name("mysql"), "sqlite": _text_name("sqlite"),
}


def _unnamed(projection: exp.Expression) -> bool:
    """An output with no name of its own: not aliased, not a column or a struct field (nor a ``*``)."""
    return not isinstance(projection, (exp.Alias, exp.Column, exp.Dot, exp.Star))


def name_outputs(tree: exp.Expression, dialect: str | None) -> dict[str, str]:
    """Alias every unnamed output of every SELECT of ``tree`` (in place) as ``dialect``'s engine names it; the names
    given, by their lower-case form (sqlglot lower-cases even quoted names in case-insensitive dialects)."""
    namer = OUTPUT_NAMERS.get(dialect or "") or _text_name(dialect or "")
    given: dict[str, str] = {}
    for select in list(tree.find_all(exp.Select)):
        unnamed = 0
        for i, p in enumerate(list(select.expressions)):
            if not _unnamed(p):
                continue
            name = namer(p, i, unnamed)
            p.replace(exp.alias_(p.copy(), exp.to_identifier(name, quoted=True)))
            given[name.lower()] = name
            unnamed += 1
    return given
