"""Field lineage derived from SQL: pure code over sqlglot, no I/O.

:func:`parse_statements` splits a text into statements (a parse error is an :class:`SqlError` with
sqlglot's line, column and message) and says what each writes (:attr:`Statement.target`) and reads
(:attr:`Statement.tables`). :func:`derive` then answers which source columns each target column comes
from, given the columns of the tables it reads (the schemas the graph holds): ``SELECT *`` and
unqualified names are resolved against them by sqlglot's ``qualify``; this module walks the scopes
(CTEs, subqueries, unions, lateral views and unnests) down to the physical tables. A text is parsed once: a
statement keeps sqlglot's tree, which the walk only reads (it qualifies a copy), and derives from it.
:func:`check` is what a statement read before the schemas are at hand is refused for: what no schema could fix
(a failure only the schemas may fix is a :class:`SchemasNeeded`).

Every edge gets OpenLineage's vocabulary:

- DIRECT: the value flows into the target column; subtype IDENTITY (unchanged, renamed, through CTEs,
  subqueries, union branches), TRANSFORMATION (any other expression) or AGGREGATION (an aggregate,
  also over a window); through layers the strongest wins (AGGREGATION > TRANSFORMATION > IDENTITY);
- INDIRECT: the value only influences it. FILTER (WHERE, HAVING, QUALIFY, IN/EXISTS subqueries), JOIN
  (ON, USING), GROUP_BY and SORT (ORDER BY) apply to every column of their SELECT; WINDOW (PARTITION BY,
  ORDER BY of an OVER clause) and CONDITIONAL (CASE WHEN, IF) to the column whose expression holds them.
  Along a path through layers the outermost INDIRECT step names the edge;
- masking: the value passes a hash (MD5, SHA1, SHA2, ...) or is only counted (COUNT), on every DIRECT path;
- ``by_name``: the source's table has no schema (or does not list the column): the reference was placed
  by its name only. A name that cannot be placed at all (an unqualified column among tables without
  schemas, ``*`` of a table without one) is reported in :attr:`SqlLineage.unresolved`, never guessed.

Nested fields are dotted paths (``shipping.geo.lat``); an array's element fields are the array's path
then the field (``items.sku``), as DataHub's v1 paths write them (the graph resolves them to v2 paths).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, cast

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect, Dialects
from sqlglot.errors import ErrorLevel, ParseError, SqlglotError, TokenError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, build_scope

from fieldgraph.errors import SqlError
from fieldgraph.sqlnames import name_outputs


class SchemasNeeded(SqlError):
    """:func:`derive` could not follow a statement that reads tables whose columns it was not given: sqlglot could
    not resolve it (an unqualified column beside an ``UNNEST``, a scalar subquery or a lateral alias, which only the
    tables' columns place), or a ``*`` left unexpanded makes its values and its column list differ. The schemas may
    let it through, so :func:`check` lets it pass."""


SOURCE_FORMAT = "sql"
#: the confidence of an edge whose source column was placed by its name only (no schema listed it)
BY_NAME_CONFIDENCE = 0.8

Kind: TypeAlias = Literal["DIRECT", "INDIRECT"]
_RANK = {"IDENTITY": 0, "TRANSFORMATION": 1, "AGGREGATION": 2}
#: functions that hide the value (OpenLineage's ``masking``): hashes, and counting
_MASKING_CLASSES: tuple[type[exp.Expression], ...] = (exp.MD5, exp.SHA, exp.SHA2, exp.Count)
_MASKING_NAMES = frozenset({"MD5", "SHA", "SHA1", "SHA2", "SHA256", "SHA512", "HASH", "FARM_FINGERPRINT",
                            "MD5_HEX", "SHA1_HEX", "SHA2_HEX", "XXHASH64", "MURMUR3_32_HASH", "COUNT_IF"})
_MASKING_PREFIXES = ("SHA", "MD5", "HASH", "FARMFINGERPRINT")
_NAVIGATION: tuple[type[exp.Expression], ...] = (exp.Lag, exp.Lead, exp.FirstValue, exp.LastValue, exp.NthValue)
_DIALECTS = frozenset(d.value for d in Dialects if d.value)
_ARRAY_FUNCTIONS = frozenset({"EXPLODE", "EXPLODE_OUTER", "POSEXPLODE", "POSEXPLODE_OUTER", "INLINE", "FLATTEN"})


# --- statements --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement of a text. ``kind``: insert, create_table, create_view, merge, select, or other
    (no lineage: DDL, USE, SET...); ``target``: the table it writes (a dotted, lower-case name), if it
    names one; ``columns``: the target's column list, if the statement gives one; ``tables``: the
    physical tables it reads (CTE names left out); ``tree``: sqlglot's tree of ``text``, which the walk only
    reads (see :meth:`parsed`)."""

    text: str
    dialect: str | None
    kind: str
    target: str | None
    columns: tuple[str, ...]
    tables: tuple[str, ...]
    index: int = 0
    tree: exp.Expression | None = field(default=None, compare=False, repr=False)

    def parsed(self) -> exp.Expression:
        """sqlglot's tree of the statement: the one it was split from, else (a statement sent to another process
        comes without it) ``text`` parsed once, then kept."""
        if self.tree is None:
            object.__setattr__(self, "tree", _trees(self.text, self.dialect)[0])
        assert self.tree is not None
        return self.tree

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled without its tree: loading a tree costs about what parsing its text does, in many times its
        bytes (the Kafka worker's decoder processes send the SQL changes they decode)."""
        return Statement, (self.text, self.dialect, self.kind, self.target, self.columns, self.tables, self.index)


def table_key(table: exp.Table) -> str:
    """The dotted, lower-case name of a table reference (``db.schema.t``)."""
    return ".".join(p.name.lower() for p in table.parts if p.name.lower() != _PAD)


#: the part put before a table name written with fewer parts than another of its statement (``orders`` beside
#: ``sales.orders``): sqlglot's schema needs one depth, and the two must stay two tables
_PAD = "fieldgraph__unqualified"


def _error(exc: SqlglotError, text: str) -> SqlError:
    """sqlglot's error as ``line L, column C: reason (near 'x')``; a tokenizer error gets its position from the
    text it quotes (the text up to where it stopped)."""
    errors = getattr(exc, "errors", None) or []
    if errors:
        e = errors[0]
        reason = f"line {e.get('line')}, column {e.get('col')}: {_tokens(str(e.get('description')))}"
        if e.get("highlight"):
            reason += f" (near {e['highlight']!r})"
        return SqlError(reason)
    message = str(exc)
    quoted = re.match(r"Error tokenizing '(.*)'$", message, re.S)
    start = text.find(quoted[1]) if quoted and quoted[1] else -1
    if quoted and start >= 0:
        end = start + len(quoted[1])
        line = text.count("\n", 0, end) + 1
        col = end - (text.rfind("\n", 0, end) + 1)
        return SqlError(f"line {line}, column {col}: cannot be tokenized (an unterminated string or quote?)")
    return SqlError(_tokens(message.splitlines()[0]))


def _tokens(message: str) -> str:
    """sqlglot's token reprs in a message as the text they stand for."""
    message = re.sub(r"<Token token_type: [\w.]+, text: (.*?), line: \d+.*?>", r"'\1'", message)
    return message.replace("'SENTINEL'", "the end of the statement")


def parse_statements(text: str, dialect: str | None = None) -> list[Statement]:
    """The statements of ``text`` (``;``-separated), or :class:`SqlError` with sqlglot's position."""
    if not isinstance(text, str) or not text.strip():
        raise SqlError("the SQL text is empty")
    return [_statement(tree, dialect, i) for i, tree in enumerate(_trees(text, dialect))]


def _trees(text: str, dialect: str | None) -> list[exp.Expression]:
    """sqlglot's trees of the statements of ``text``: the only place SQL is parsed."""
    try:
        trees = sqlglot.parse(text, read=dialect, error_level=ErrorLevel.RAISE)
        return [cast(exp.Expression, t) for t in trees if t is not None]
    except (ParseError, TokenError) as exc:
        raise _error(exc, text) from exc
    except RecursionError:
        raise SqlError("the SQL is nested too deeply to parse") from None
    except ValueError as exc:  # an unknown dialect
        raise SqlError(str(exc)) from exc


def _statement(tree: Any, dialect: str | None, index: int) -> Statement:
    text = tree.sql(dialect=dialect)
    kind, query, (target, columns) = _writes(tree)
    if query is None:
        return Statement(text, dialect, kind, target, columns, (), index, tree)
    with _following(_what(kind, target)):
        if kind == "merge":
            using = tree.args.get("using")
            found = list(using.find_all(exp.Table)) if isinstance(using, exp.Expression) else []
        else:
            found = _physical_tables(_query_in(tree))
    tables = {table_key(t): None for t in found if t.name and not isinstance(t.this, exp.Func) and
              not (kind == "create_table" and query is tree and table_key(t) == target)}
    return Statement(text, dialect, kind, target, columns, tuple(tables), index, tree)


def _writes(tree: Any) -> tuple[str, Any, tuple[str | None, tuple[str, ...]]]:
    """A statement's kind, the query it runs (``None``: it writes no lineage) and the table it writes, with the
    column list it gives."""
    if isinstance(tree, exp.Insert) and isinstance(tree.expression, exp.Query):  # not VALUES, DEFAULT VALUES
        return "insert", tree.expression, _target(tree.this)
    if isinstance(tree, exp.Create) and isinstance(tree.expression, exp.Query):
        kind = "create_view" if str(tree.args.get("kind") or "").upper() == "VIEW" else "create_table"
        return kind, tree.expression, _target(tree.this)
    if isinstance(tree, exp.Merge):
        return "merge", tree, _target(tree.this)
    if isinstance(tree, exp.Select) and isinstance(tree.args.get("into"), exp.Into):  # T-SQL SELECT ... INTO t
        return "create_table", tree, (_target(tree.args["into"].this)[0], ())
    if isinstance(tree, exp.Query):
        return "select", tree, (None, ())
    return "other", None, (None, ())


@contextmanager
def _following(what: str, failed: type[SqlError] = SqlError) -> Iterator[None]:
    """sqlglot's scopes and optimizer fail in many ways on SQL it parsed: each failure inside is a
    :class:`SqlError` naming the statement (``what``); one of sqlglot's is a ``failed`` (:class:`SchemasNeeded`
    where tables it reads have no schema given)."""
    try:
        yield
    except SqlError as exc:
        raise SqlError(f"{what}: {exc}") from exc
    except RecursionError:
        raise SqlError(f"{what}: nested too deeply to follow") from None
    except Exception as exc:  # noqa: BLE001 - see above
        raise failed(f"{what}: sqlglot cannot resolve it: {_tokens(str(exc).splitlines()[0] or type(exc).__name__)}"
                     ) from exc


def _what(kind: str, target: str | None) -> str:
    """How messages name a statement: what it writes."""
    verb = {"insert": "INSERT INTO", "create_table": "CREATE TABLE", "create_view": "CREATE VIEW",
            "merge": "MERGE INTO"}.get(kind)
    return f"{verb} {target}" if verb and target else "the SELECT" if kind == "select" else "the statement"


def _physical_tables(query: exp.Expression) -> list[exp.Table]:
    """The tables a query reads, as sqlglot's scopes resolve names (CTEs are not tables; a CTE that reads a table
    of its own name reads the table)."""
    root = build_scope(query)
    if root is None:
        return list(query.find_all(exp.Table))
    return [src for scope in root.traverse() for src in scope.sources.values() if isinstance(src, exp.Table)]


def _query_in(tree: exp.Expression) -> Any:
    """The query a statement runs: a SELECT's (``SELECT ... INTO t``: without the INTO), else an INSERT's or a
    CREATE's (with the CTEs written before an INSERT)."""
    if isinstance(tree, exp.Select) and tree.args.get("into") is not None:
        query = tree.copy()
        query.set("into", None)
        return query
    return tree if isinstance(tree, exp.Query) else _query_of(tree)


def _query_of(tree: exp.Expression) -> Any:
    """The query an INSERT or CREATE writes, with the CTEs written before the INSERT (``WITH x AS (...) INSERT``)."""
    query = tree.expression
    outer = tree.args.get("with_")
    if outer is None:
        return query
    query = query.copy()
    inner = query.args.get("with_")
    ctes = [c.copy() for c in outer.expressions] + (list(inner.expressions) if inner is not None else [])
    query.set("with_", exp.With(expressions=ctes, recursive=outer.args.get("recursive")))
    return query


def _target(this: Any) -> tuple[str | None, tuple[str, ...]]:
    if isinstance(this, exp.Schema):
        cols = tuple(_name(e) for e in this.expressions)
        this = this.this
    else:
        cols = ()
    return (table_key(this) if isinstance(this, exp.Table) else None), cols


def _name(e: exp.Expression) -> str:
    """An identifier's name: unquoted ones lower-case (SQL names are case-insensitive)."""
    ident = e if isinstance(e, exp.Identifier) else e.find(exp.Identifier)
    if ident is None:
        return e.name
    return ident.name if ident.quoted else ident.name.lower()


# --- renames ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SqlRename:
    """A rename a statement states (it has no lineage): of columns of ``table`` (``columns``: (old, new) dotted
    paths as the statement spells them; a nested field keeps its parent), or of ``table`` itself to ``new_table``
    (a new name with fewer parts than the old takes the old's leading parts: ``RENAME TO u`` stays in its schema).
    Table names are dotted and lower-case, as :func:`table_key` writes them."""

    table: str
    columns: tuple[tuple[str, str], ...] = ()
    new_table: str | None = None


def rename_of(statement: Statement) -> SqlRename | None:
    """The rename ``statement`` states, else ``None``: ``ALTER TABLE t RENAME COLUMN a TO b`` (and Postgres's and
    DuckDB's ``RENAME a TO b``), Hive's and Spark's ``CHANGE [COLUMN] a b type``, MySQL's ``CHANGE COLUMN a b
    type``, ``ALTER TABLE|VIEW t RENAME TO u``, and T-SQL's ``EXEC sp_rename 't.a', 'b', 'COLUMN'`` and
    ``EXEC sp_rename 't', 'u'``. A ``CHANGE`` that keeps the name is no rename."""
    if statement.kind != "other":
        return None
    tree = statement.parsed()
    if isinstance(tree, exp.Execute):
        return _sp_rename(tree)
    if isinstance(tree, exp.Command):
        return _command_rename(tree, statement.dialect)
    return _alter_rename(tree)


def _alter_rename(tree: Any) -> SqlRename | None:
    """The rename of an ``ALTER TABLE|VIEW`` sqlglot parsed."""
    if not isinstance(tree, exp.Alter) or not isinstance(tree.this, exp.Table) or \
            str(tree.args.get("kind") or "TABLE").upper() not in ("TABLE", "VIEW", "MATERIALIZED VIEW"):
        return None
    table = table_key(tree.this)
    columns: list[tuple[str, str]] = []
    new_table: str | None = None
    to = [o.this for o in tree.args.get("options") or () if isinstance(o, exp.ToTableProperty)]
    for action in tree.args.get("actions") or ():
        if isinstance(action, exp.RenameColumn):
            old = _path(action.this)
            columns.append((old, _renamed(old, _path(action.args["to"]))))
        elif isinstance(action, exp.AlterRename) and to and isinstance(action.this, exp.Table):
            columns.append((_path(action.this), _path(to[0])))  # Postgres's RENAME a TO b, as sqlglot reads it
        elif isinstance(action, exp.AlterRename) and isinstance(action.this, exp.Table):
            new_table = _moved(table, table_key(action.this))
        elif isinstance(action, exp.AlterColumn) and action.args.get("rename_to") is not None:
            columns.append((_path(action.this), _path(action.args["rename_to"])))
        elif isinstance(action, exp.ModifyColumn) and action.args.get("rename_from") is not None:
            columns.append((_path(action.args["rename_from"]), _path(action.this)))
    columns = [(old, new) for old, new in columns if not _same(old, new)]
    if not columns and new_table in (None, table):
        return None
    return SqlRename(table, tuple(columns), None if new_table == table else new_table)


def _path(e: Any) -> str:
    """A column's dotted path as written (quoted or not: field names keep their case)."""
    if isinstance(e, exp.ColumnDef):
        e = e.this
    parts = e.parts if isinstance(e, (exp.Column, exp.Table)) else [e]
    return ".".join(p.name for p in parts)


def _renamed(old: str, new: str) -> str:
    """The new path of a nested field renamed by its name only (``RENAME COLUMN s.a TO b``: ``s.b``)."""
    parent = old.split(".")[:-1]
    return ".".join([*parent[:len(parent) - new.count(".")], new])


def _moved(old: str, new: str) -> str:
    """The new table name, with the old's leading parts where the new has fewer."""
    parts = old.split(".")
    return ".".join([*parts[:len(parts) - new.count(".") - 1], new])


def _same(old: str, new: str) -> bool:
    """The same column: SQL names are compared without case (``CHANGE a A INT`` keeps the column)."""
    return old.lower() == new.lower()


def _command_rename(tree: exp.Command, dialect: str | None) -> SqlRename | None:
    """Renames in statements sqlglot keeps as text: an ``ALTER TABLE`` of several actions (BigQuery's ``RENAME
    COLUMN a TO b, RENAME COLUMN c TO d``), each action read as an ``ALTER`` of its own, and MySQL's ``RENAME TABLE
    t TO u`` (one table: several are several renames, which one statement cannot give)."""
    verb = str(tree.this).upper()
    body = tree.expression.this if isinstance(tree.expression, exp.Expression) else str(tree.expression or "")
    if verb not in ("ALTER", "RENAME") or not re.search(r"\b(RENAME|CHANGE)\b", f"{verb} {body}", re.I):
        return None
    try:
        pieces = _top_level(body, dialect)
        if verb == "RENAME":
            m = re.fullmatch(r"\s*TABLE\s+(.+?)\s+TO\s+(.+?)\s*", body, re.I | re.S)
            if len(pieces) != 1 or m is None:
                return None
            old, new = (table_key(exp.to_table(n, dialect=dialect)) for n in m.groups())
            return SqlRename(old, (), new) if old != new else None
        first = sqlglot.parse_one(f"ALTER {pieces[0]}", read=dialect, error_level=ErrorLevel.RAISE)
        if not isinstance(first, exp.Alter) or not isinstance(first.this, exp.Table):
            return None
        head = f"ALTER {first.args.get('kind') or 'TABLE'} {first.this.sql(dialect=dialect)}"
        parts = [first] + [sqlglot.parse_one(f"{head} {p}", read=dialect, error_level=ErrorLevel.RAISE)
                           for p in pieces[1:]]
    except SqlglotError:
        return None
    renames = [_alter_rename(p) for p in parts]
    columns = tuple(c for r in renames if r for c in r.columns)
    new_tables = {r.new_table for r in renames if r and r.new_table}
    if not columns and not new_tables:
        return None
    return SqlRename(table_key(first.this), columns, next(iter(new_tables)) if len(new_tables) == 1 else None)


def _top_level(text: str, dialect: str | None) -> list[str]:
    """``text`` cut at its commas outside parentheses (by sqlglot's tokens: quoted names keep theirs)."""
    pieces, start, depth = [], 0, 0
    for t in Dialect.get_or_raise(dialect).tokenize(text):
        kind = t.token_type.name
        depth += {"L_PAREN": 1, "R_PAREN": -1}.get(kind, 0)
        if kind == "COMMA" and depth == 0:
            pieces.append(text[start:t.start])
            start = t.end + 1
    return [*pieces, text[start:]]


def _sp_rename(tree: exp.Execute) -> SqlRename | None:
    """T-SQL's ``sp_rename 'objname', 'newname'[, 'COLUMN']`` (positional literals; brackets dropped)."""
    if not isinstance(tree.this, exp.Table) or tree.this.name.lower() != "sp_rename":
        return None
    args = [a.this if isinstance(a, exp.Literal) and a.is_string else None for a in tree.expressions]
    if len(args) not in (2, 3) or None in args:
        return None
    names = [p.strip("[]\"") for p in str(args[0]).split(".")]
    new = str(args[1]).strip("[]\"")
    kind = str(args[2]).upper() if len(args) == 3 else "OBJECT"
    if kind == "COLUMN" and len(names) >= 2:
        old = names[-1]
        return None if old == new else SqlRename(".".join(names[:-1]).lower(), ((old, new),))
    if kind == "OBJECT":
        table = ".".join(names).lower()
        moved = _moved(table, new.lower())
        return None if moved == table else SqlRename(table, (), moved)
    return None


def dialect_of(platform: str) -> str | None:
    """The sqlglot dialect of a DataHub platform (its name, where sqlglot has a dialect by that name)."""
    name = platform.rsplit(":", 1)[-1].lower()
    return name if name in _DIALECTS else None


def match_tables(keys: Iterable[str], candidates: Mapping[str, str]) -> dict[str, str]:
    """SQL table names -> the URNs of ``candidates`` (dataset name -> URN) whose name ends with the SQL name's
    parts (``orders`` and ``shop.orders`` match ``db.shop.orders``), case-insensitively; a name that matches
    none or several is left out."""
    out: dict[str, str] = {}
    for key in keys:
        parts = key.lower().split(".")
        found = {urn for name, urn in candidates.items() if name.lower().split(".")[-len(parts):] == parts}
        if len(found) == 1:
            out[key] = found.pop()
    return out


# --- lineage -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Role:
    kind: Kind
    subtype: str
    masked: bool = False


_SELF = Role("DIRECT", "IDENTITY")


def _then(outer: Role, inner: Role) -> Role:
    """The role of a source reached through ``inner`` then ``outer`` (outer is nearer the target)."""
    if outer.kind == "INDIRECT":
        return outer
    if inner.kind == "INDIRECT":
        return inner
    subtype = outer.subtype if _RANK[outer.subtype] >= _RANK[inner.subtype] else inner.subtype
    return Role("DIRECT", subtype, outer.masked or inner.masked)


#: (table key, dotted column path) -> the roles it plays
Deps: TypeAlias = dict[tuple[str, str], set[Role]]


def _add(into: Deps, src: tuple[str, str], roles: Iterable[Role]) -> None:
    into.setdefault(src, set()).update(roles)


@dataclass(frozen=True, slots=True)
class SqlEdge:
    """``column`` of the target derives from ``path`` of ``table``."""

    column: str
    table: str
    path: str
    kind: Kind
    subtype: str
    masking: bool
    transformations: tuple[str, ...]
    by_name: bool = False

    @property
    def key(self) -> str:
        return f"{self.column} <- {self.table}.{self.path}"


@dataclass(frozen=True, slots=True)
class SqlLineage:
    """What one statement writes: ``target``'s ``columns`` and their ``edges``; ``unresolved``: names
    that could not be placed (no edge made for them; ``column positions``: no column could be matched to its
    value)."""

    target: str
    columns: tuple[str, ...]
    edges: tuple[SqlEdge, ...]
    unresolved: tuple[str, ...] = ()
    #: the statement's kind (:attr:`Statement.kind`)
    kind: str = "insert"
    #: what the derivation decided that the user should hear of: a created table's derived column names that its
    #: schema does not list (both names), values of one name written to one field
    notes: tuple[str, ...] = ()


Schemas: TypeAlias = Mapping[str, Sequence[str]]


def derive(statement: Statement, schemas: Schemas, target: str | None = None, *,
           unordered: Iterable[str] = ()) -> SqlLineage:
    """The lineage of ``statement`` into ``target`` (default: the table it names). ``schemas``: table key
    -> its field paths (dotted; nested fields after their parent), for every table whose schema is known
    (the target's too, for an INSERT without a column list); ``unordered``: tables whose columns' order is not
    known (a positional mapping through them is reported unresolved, never guessed)."""
    tree = statement.parsed()
    name = _written(statement, target, tree)
    what = _what(statement.kind, name)
    query = None if statement.kind == "merge" else _query_in(tree)
    stars = _reads_star(tree)
    if statement.columns and query is not None and not stars and len(query.selects) != len(statement.columns):
        # counted before following it: no schema changes how many values a SELECT without * gives
        raise SqlError(f"{what}: lists {len(statement.columns)} target columns for {len(query.selects)} values")
    known = {k.lower(): list(v) for k, v in schemas.items()}
    walk = _Walk(statement, known)
    # a table it reads has no schema given: what sqlglot cannot follow, its columns may let it follow
    read = (*statement.tables, name) if statement.kind == "merge" else statement.tables
    failed = SchemasNeeded if any(t not in known for t in read) else SqlError
    with _following(what, failed):
        outputs = walk.merge(tree, name) if query is None else walk.query(query)
    unresolved = tuple(dict.fromkeys(walk.unresolved))
    if _places_unknown(statement, tree, walk.unresolved, known.get(name), name, set(unordered)):
        # the columns' places are not known (union branches map by place too): no column is matched to its value
        return SqlLineage(name, statement.columns, (), (*unresolved, "column positions"), statement.kind)
    outputs = [(walk.named.get(n, n), deps) for n, deps in outputs]  # as named, not as sqlglot lower-cased them
    notes: list[str] = []
    names = _target_columns(statement, outputs, known.get(name), _Target(what, name, walk, notes),
                            failed if stars else SqlError)
    edges = _edges(statement, name, names, outputs, walk)
    return SqlLineage(name, tuple(dict.fromkeys(names)), tuple(_merged(edges)), unresolved, statement.kind,
                      tuple(notes))


def check(statement: Statement, target: str | None = None) -> None:
    """What :func:`derive` refuses whatever the schemas (:class:`SqlError`), for a statement read before the schemas
    of its tables are at hand: one that writes no table (DDL, a SELECT without ``target``) or names another than
    ``target``; a column list of another length than the values, none of them a ``*``; a statement nested too deeply
    to follow; what sqlglot cannot follow though it reads no table (so no schema is missing). What only the tables'
    columns can follow (:class:`SchemasNeeded`) passes: it is derived against them."""
    try:
        derive(statement, {}, target)
    except SchemasNeeded:
        pass


def _written(statement: Statement, target: str | None, tree: exp.Expression) -> str:
    """The table ``statement`` writes: the one it names, else ``target``; :class:`SqlError` if it writes none, or
    names another."""
    name = statement.target or target
    if statement.kind == "other" or not name:
        raise SqlError("a SELECT writes no table: give the target that holds its results"
                       if statement.kind == "select" else f"a {tree.key.upper()} statement derives no lineage")
    if statement.target and target and statement.target != target:
        raise SqlError(f"{_what(statement.kind, name)}: the statement writes {statement.target}, "
                       f"not the target {target}")
    return name


def _places_unknown(statement: Statement, tree: exp.Expression, unresolved: Sequence[str],
                    schema: Sequence[str] | None, name: str, unordered: set[str]) -> bool:
    """Whether the values map to the target's columns by place through columns whose places are not known: a
    ``*`` that could not be expanded, or one over a table of unknown column order (a union's branches map by
    place too), or a target of unknown column order."""
    lost = any(u == "*" or u.endswith(".*") for u in unresolved)
    unordered_stars = _reads_star(tree) and bool(unordered & {*statement.tables})
    if unordered_stars and any(True for _ in tree.find_all(exp.SetOperation)):
        return True
    by_position = bool(statement.columns) or _onto_schema(statement, schema)
    return by_position and (lost or unordered_stars or (name in unordered and not statement.columns))


def _edges(statement: Statement, name: str, columns: Sequence[str], outputs: Sequence[tuple[str, Deps]],
           walk: _Walk) -> list[SqlEdge]:
    """An edge per target column and source it derives from (a MERGE's reads of its own target left out)."""
    edges = []
    for col, (_, deps) in zip(columns, outputs, strict=False):
        for (table, path), roles in sorted(deps.items()):
            if table == name and statement.kind == "merge":
                continue
            edges.append(_edge(col, table, path, roles, walk.by_name(table, path)))
    return edges


def _reads_star(tree: exp.Expression) -> bool:
    return any(isinstance(s.parent, (exp.Select, exp.Column)) for s in tree.find_all(exp.Star))


@dataclass(frozen=True, slots=True)
class _Target:
    """What :func:`_target_columns` names: the statement (``what``), its target, the walk, and the notes it adds."""

    what: str
    name: str
    walk: _Walk
    notes: list[str]


def _target_columns(statement: Statement, outputs: Sequence[tuple[str, Deps]], schema: Sequence[str] | None,
                    target: _Target, failed: type[SqlError] = SqlError) -> list[str]:
    """The target column of each output: the statement's column list, else (an INSERT, a SELECT whose values share
    a name) the target schema's columns in order, else the outputs' names; names spelled as the target's schema
    spells them. ``failed``: the error of a column list of another length or of a table created with two columns
    of one name (:class:`SchemasNeeded` where a ``*`` may expand with schemas)."""
    names = [n for n, _ in outputs]
    top = [p for p in (schema or ()) if "." not in p]
    spelled = {p.lower(): p for p in top}
    what = target.what
    if statement.columns:
        if len(statement.columns) != len(names):
            raise failed(f"{what}: lists {len(statement.columns)} target columns for {len(names)} values")
        return [spelled.get(c.lower(), c) for c in statement.columns]
    twice = _shared_name(statement, names, target, failed)
    if _onto_schema(statement, top) or (twice and top):
        if len(top) < len(names):
            raise SqlError(f"{what}: inserts {len(names)} values into a table whose schema has {len(top)} columns")
        return top[:len(names)]
    if twice:
        target.notes.append(f"{what}: {sum(n.lower() == twice.lower() for n in names)} values are named "
                            f"{twice}; the schema of {target.name} is not known to place them by position, so all "
                            f"go to its column {twice}")
    if statement.kind in _CREATES and top:
        return _onto_created(names, top, target)
    return [spelled.get(n.lower(), n) for n in names]


#: the statements that create their target, whose columns are named by the statement
_CREATES = ("create_table", "create_view")


def _shared_name(statement: Statement, names: Sequence[str], target: _Target,
                 failed: type[SqlError]) -> str | None:
    """A name two outputs share (none for a MERGE, which may set a column in several clauses); refused for a table
    the statement creates, as the engines refuse it."""
    twice = _repeated(names) if statement.kind != "merge" else None
    if twice and statement.kind in _CREATES:
        raise failed(f"{target.what}: two of its columns are named {twice} (the engines refuse such a table): "
                     "alias them")
    return twice


def _repeated(names: Sequence[str]) -> str | None:
    """The first name two outputs share (SQL names are case-insensitive), else ``None``."""
    seen: set[str] = set()
    for n in names:
        if n.lower() in seen:
            return n
        seen.add(n.lower())
    return None


def _onto_created(names: Sequence[str], top: Sequence[str], target: _Target) -> list[str]:
    """The columns of a table a ``CREATE ... AS`` writes, whose schema is known: each output's name where the schema
    lists it; an output the statement does not name (``SELECT sum(x)``: named as the dialect's engine names it)
    and the schema does not list, the schema's column at its place (same column count); each disagreement noted
    with both names."""
    spelled = {p.lower(): p for p in top}
    out = []
    for i, n in enumerate(names):
        if n.lower() in spelled:
            out.append(spelled[n.lower()])
            continue
        there = top[i] if i < len(top) else None
        derived = f"{target.what}: column {i + 1} is derived as {n!r}"
        if there is not None and len(top) == len(names) and target.walk.named.get(n.lower()) == n:
            out.append(there)
            target.notes.append(f"{derived} (written without a name: as the dialect's engine names it), the schema "
                                f"of {target.name} has {there!r} there: its edges go to {there!r}")
            continue
        out.append(n)
        has = f"has {there!r} there" if there is not None else f"has {len(top)} columns"
        target.notes.append(f"{derived}, which the schema of {target.name} does not list (it {has})")
    return out


def _onto_schema(statement: Statement, schema: Sequence[str] | None) -> bool:
    """An INSERT without a column list (nor ``BY NAME``) into a table of known columns maps by position."""
    return statement.kind == "insert" and any("." not in p for p in schema or ()) and \
        not statement.parsed().args.get("by_name")


def _edge(column: str, table: str, path: str, roles: set[Role], by_name: bool) -> SqlEdge:
    direct = [r for r in roles if r.kind == "DIRECT"]
    main = max(direct, key=lambda r: _RANK[r.subtype]) if direct else min(roles, key=lambda r: r.subtype)
    masked = bool(direct) and all(r.masked for r in direct)
    transformations = tuple(sorted({f"{r.kind}/{r.subtype}" for r in roles}))
    return SqlEdge(column, table, path, main.kind, main.subtype, masked, transformations, by_name)


def _merged(edges: list[SqlEdge]) -> list[SqlEdge]:
    """One edge per (column, source): MERGE statements may set a column in several clauses."""
    out: dict[tuple[str, str, str], SqlEdge] = {}
    for e in edges:
        k = (e.column, e.table, e.path)
        prev = out.get(k)
        if prev is None:
            out[k] = e
            continue
        ts = tuple(sorted(set(prev.transformations) | set(e.transformations)))
        better = e if _rank(e) > _rank(prev) else prev
        masking = (prev.masking or prev.kind == "INDIRECT") and (e.masking or e.kind == "INDIRECT") and \
            "DIRECT" in (prev.kind, e.kind)
        out[k] = SqlEdge(e.column, e.table, e.path, better.kind, better.subtype, masking, ts,
                         prev.by_name or e.by_name)
    return list(out.values())


def _rank(e: SqlEdge) -> tuple[int, int]:
    return (e.kind == "DIRECT", _RANK.get(e.subtype, -1))


@dataclass(slots=True)
class _Ctx:
    """How a visited expression's columns reach the output: ``indirect`` (the subtype) or direct."""

    indirect: str | None = None
    subtype: str = "IDENTITY"
    masked: bool = False

    def role(self) -> Role:
        if self.indirect:
            return Role("INDIRECT", self.indirect)
        return Role("DIRECT", self.subtype, self.masked)

    def transformed(self) -> _Ctx:
        return _Ctx(self.indirect, "AGGREGATION" if self.subtype == "AGGREGATION" else "TRANSFORMATION", self.masked)

    def aggregated(self, masked: bool) -> _Ctx:
        return _Ctx(self.indirect, "AGGREGATION", self.masked or masked)

    def masking(self) -> _Ctx:
        return _Ctx(self.indirect, "AGGREGATION" if self.subtype == "AGGREGATION" else "TRANSFORMATION", True)

    def as_indirect(self, subtype: str) -> _Ctx:
        return self if self.indirect else _Ctx(subtype)


@dataclass(slots=True)
class _MergeWrites:
    """What a MERGE writes: each column set (and the index of its clause's condition in ``conditions``, if its
    ``WHEN`` has one) with its value, in the order of its clauses."""

    columns: list[tuple[str, int | None]] = field(default_factory=list)
    values: list[exp.Expression] = field(default_factory=list)
    conditions: list[exp.Expression] = field(default_factory=list)


def _conditional(deps: Deps, condition: Deps) -> Deps:
    """``deps`` with what a ``WHEN ... AND`` condition reads, CONDITIONAL (its INDIRECT reads as they are)."""
    for src, roles in condition.items():
        _add(deps, src, (_then(Role("INDIRECT", "CONDITIONAL"), r) if r.kind == "DIRECT" else r for r in roles))
    return deps


class _Walk:
    """One statement's walk: qualified by sqlglot against the known schemas, then scope by scope."""

    def __init__(self, statement: Statement, schemas: dict[str, list[str]]) -> None:
        self.dialect = statement.dialect
        self.schemas = schemas
        self.unresolved: list[str] = []
        self._outputs: dict[int, list[tuple[str, Deps]]] = {}
        self._lower = {t: {p.lower(): p for p in paths} for t, paths in schemas.items()}
        #: the names given to outputs written without one (:func:`fieldgraph.sqlnames.name_outputs`), by their
        #: lower-case form
        self.named: dict[str, str] = {}
        #: a SELECT's output aliases, while its ORDER BY is visited (which may name them inside expressions)
        self._aliases: dict[str, exp.Expression] = {}

    # -- the schema sqlglot qualifies against

    def qualified(self, tree: exp.Expression) -> exp.Expression:
        """``tree`` qualified by sqlglot against the known schemas (physical tables padded to one depth)."""
        tree = tree.copy()
        self.named.update(name_outputs(tree, self.dialect))
        tables = [t for t in _physical_tables(tree) if t.name]
        depth = max((len(t.parts) for t in tables), default=1)
        mapping: dict[str, Any] = {}
        for t in tables:
            for arg in ("db", "catalog")[len(t.parts) - 1:][:depth - len(t.parts)]:  # the outer parts it lacks
                t.set(arg, exp.to_identifier(_PAD))
            paths = self.schemas.get(table_key(t))
            if paths is not None:
                node = mapping
                for part in t.parts[:-1]:
                    node = node.setdefault(part.name, {})
                node[t.name] = _column_types(paths)
        return qualify(tree, schema=mapping or None, dialect=self.dialect, validate_qualify_columns=False,
                       quote_identifiers=False, identify=False)

    def by_name(self, table: str, path: str) -> bool:
        known = self._lower.get(table)
        return known is None or path.lower() not in known

    def _real_path(self, table: str, path: str) -> str:
        known = self._lower.get(table)
        if known is None:
            return path.lower()
        return known.get(path.lower(), path.lower())

    # -- queries

    def query(self, query: exp.Expression) -> list[tuple[str, Deps]]:
        q = self.qualified(query)
        root = build_scope(q)
        if root is None:
            raise SqlError("sqlglot found no query scope in the statement")
        return self.outputs(root)

    def merge(self, tree: exp.Expression, target: str) -> list[tuple[str, Deps]]:
        """A MERGE as the SELECT it amounts to: every value it writes, read from the target joined to the
        source ON the merge condition; a ``WHEN ... AND`` condition is CONDITIONAL to the columns its
        clause sets."""
        using, on = tree.args.get("using"), tree.args.get("on")
        if using is None:
            raise SqlError("a MERGE without USING")
        writes = self._merge_writes(tree, target, using)
        if not writes.columns:
            return []
        projections = [exp.alias_(v, f"_v{i}") for i, v in enumerate(writes.values)]
        projections += [exp.alias_(c, f"_w{i}") for i, c in enumerate(writes.conditions)]
        select = exp.select(*projections).from_(tree.this.copy()).join(
            using.copy(), on=on.copy() if on is not None else None, join_type="LEFT" if on is not None else "CROSS")
        outputs = self.query(select)
        values, conditions = outputs[:len(writes.values)], outputs[len(writes.values):]
        return [(col, _conditional(deps, conditions[i][1]) if i is not None else deps)
                for (col, i), (_, deps) in zip(writes.columns, values, strict=False)]

    def _merge_writes(self, tree: exp.Expression, target: str, using: exp.Expression) -> _MergeWrites:
        """What a MERGE's ``WHEN`` clauses write, in order."""
        writes = _MergeWrites()
        whens = tree.args.get("whens")
        for when in (whens.expressions if whens is not None else tree.args.get("expressions") or []):
            cond = when.args.get("condition")
            pairs = self._merge_sets(when.args.get("then"), target, using)
            if cond is not None and pairs:
                writes.conditions.append(cond.copy())
            for col, value in pairs:
                writes.columns.append((col, len(writes.conditions) - 1 if cond is not None else None))
                writes.values.append(value.copy())
        return writes

    def _merge_sets(self, then: exp.Expression | None, target: str, using: exp.Expression
                    ) -> list[tuple[str, exp.Expression]]:
        """(column, value) for each column a MERGE clause's UPDATE or INSERT sets (none for DELETE)."""
        if isinstance(then, exp.Update) and any(isinstance(e, exp.Star) for e in then.expressions) or \
                isinstance(then, exp.Insert) and isinstance(then.this, exp.Star):
            return self._by_name(target, using)  # UPDATE SET * / INSERT *: every column, by name
        if isinstance(then, exp.Update):
            return [(_name(e.this), e.expression) for e in then.expressions if isinstance(e, exp.EQ)]
        if isinstance(then, exp.Insert):
            cols = then.this.expressions if isinstance(then.this, exp.Tuple) else []
            vals = then.expression.expressions if isinstance(then.expression, exp.Tuple) else []
            return [(_name(c), v) for c, v in zip(cols, vals, strict=False)]
        return []

    def _by_name(self, target: str, using: exp.Expression) -> list[tuple[str, exp.Expression]]:
        """``UPDATE SET *`` / ``INSERT *`` of a MERGE: each column of the target (else of the source) set from the
        source's column of that name; with neither schema known, ``*`` is reported unresolved."""
        alias = using.alias_or_name
        names = [p for p in self.schemas.get(target, ()) if "." not in p]
        if not names and isinstance(using, exp.Table):
            names = [p for p in self.schemas.get(table_key(using), ()) if "." not in p]
        elif not names and isinstance(using, exp.Subquery):
            names = [n for n, _ in self.query(using.this)]
        if not names:
            self.unresolved.append("*")
        return [(n, exp.column(n, table=alias)) for n in names]

    def outputs(self, scope: Scope) -> list[tuple[str, Deps]]:
        """Each output column of ``scope`` (in order) and what it derives from, its SELECT's own
        FILTER/JOIN/GROUP_BY/SORT inputs included."""
        cached = self._outputs.get(id(scope))
        if cached is not None:
            return cached
        if isinstance(scope.expression, exp.SetOperation):
            out = self._union(scope)
        elif isinstance(scope.expression, exp.Select):
            out = self._select(scope)
        else:
            out = []
        self._outputs[id(scope)] = out
        return out

    def _union(self, scope: Scope) -> list[tuple[str, Deps]]:
        branches = [self.outputs(s) for s in scope.set_operation_scopes]
        first = branches[0]
        out: list[tuple[str, Deps]] = []
        for i, (name, _) in enumerate(first):
            deps: Deps = {}
            for b in branches:
                if i < len(b):
                    for src, roles in b[i][1].items():
                        _add(deps, src, roles)
            out.append((name, deps))
        return out

    def _select(self, scope: Scope) -> list[tuple[str, Deps]]:
        select = scope.expression
        shared = self._shared(scope)
        out = []
        for projection in select.expressions:
            if isinstance(projection, exp.Star) or (isinstance(projection, exp.Column)
                                                    and isinstance(projection.this, exp.Star)):
                table = projection.table if isinstance(projection, exp.Column) else ""
                self.unresolved.append(f"{table}.*" if table else "*")
                continue
            deps: Deps = {}
            self.visit(projection, scope, _Ctx(), deps)
            for src, roles in shared.items():
                _add(deps, src, roles)
            out.append((_output_name(projection), deps))
        return out

    def _shared(self, scope: Scope) -> Deps:
        """What a SELECT's clauses read for every one of its columns: FILTER, GROUP_BY, SORT, JOIN."""
        select = scope.expression
        shared: Deps = {}
        for key, subtype in (("where", "FILTER"), ("having", "FILTER"), ("qualify", "FILTER"),
                             ("group", "GROUP_BY")):
            node = select.args.get(key)
            if node is not None:
                self.visit(node, scope, _Ctx(subtype), shared)
        if isinstance(select.args.get("group"), exp.Group) and select.args["group"].args.get("all"):
            self._group_by_all(scope, shared)
        if select.args.get("order") is not None:
            self._order_by(scope, shared)
        for join in select.args.get("joins") or []:
            if join.args.get("on") is not None:
                self.visit(join.args["on"], scope, _Ctx("JOIN"), shared)
            for ident in join.args.get("using") or []:
                self._using(ident, scope, shared)
        distinct = select.args.get("distinct")
        if distinct is not None and distinct.args.get("on") is not None:
            self.visit(distinct.args["on"], scope, _Ctx("FILTER"), shared)
        return shared

    def _group_by_all(self, scope: Scope, into: Deps) -> None:
        """``GROUP BY ALL``: every column that aggregates nothing."""
        for p in scope.expression.expressions:
            if not any(_aggregates(n) for n in p.walk()):
                self.visit(p, scope, _Ctx("GROUP_BY"), into)

    def _order_by(self, scope: Scope, into: Deps) -> None:
        """A SELECT's ORDER BY, whose unqualified names name its output columns first, alone or inside an expression
        (``ORDER BY CASE WHEN alias = 0 THEN col END``)."""
        select = scope.expression
        self._aliases = {p.alias.lower(): p.this for p in select.expressions if isinstance(p, exp.Alias)}
        try:
            for ordered in select.args["order"].expressions:
                self.visit(ordered.this, scope, _Ctx("SORT"), into)
        finally:
            self._aliases = {}

    def _using(self, ident: exp.Expression, scope: Scope, into: Deps) -> None:
        """``JOIN t USING (c)``: ``c`` of the joined table and of the tables before it."""
        name = ident.name
        for alias in scope.sources:
            self._column(exp.column(name, table=alias), scope, _Ctx("JOIN"), into, (), quiet=True)

    # -- expressions

    def visit(self, node: exp.Expression, scope: Scope, ctx: _Ctx, into: Deps) -> None:
        """Add what ``node`` reads to ``into``, each source with the role ``ctx`` gives it."""
        if isinstance(node, (exp.Literal, exp.Null, exp.Boolean, exp.Star, exp.Identifier, exp.DataType,
                             exp.Placeholder, exp.Parameter)):
            return
        if isinstance(node, exp.Column):
            alias = self._aliases.get(node.name.lower()) if not node.table else None
            if alias is not None:  # an output alias named in ORDER BY: what the output reads
                self._aliases, aliases = {}, self._aliases
                self.visit(alias, scope, ctx, into)
                self._aliases = aliases
            elif not isinstance(node.this, exp.Star):
                self._column(node, scope, ctx, into, ())
            return
        if isinstance(node, exp.Dot):
            base, path = _dotted(node)
            if base is not None:
                self._column(base, scope, ctx, into, path)
                return
        if isinstance(node, (exp.Subquery, exp.Query)):
            self._subquery(node, scope, ctx, into)
            return
        special = self._SPECIAL.get(type(node))
        if special is not None:
            special(self, node, scope, ctx, into)
            return
        if isinstance(node, (exp.Alias, exp.Paren, exp.Ordered, exp.Group, exp.Where, exp.Having, exp.Qualify,
                               exp.Distinct, exp.Tuple)):
            child_ctx = ctx
        elif isinstance(node, exp.Exists):
            child_ctx = ctx if ctx.indirect else _Ctx("FILTER")
        elif _masks(node):
            child_ctx = ctx.aggregated(True) if _aggregates(node) else ctx.masking()
        elif _aggregates(node):
            child_ctx = ctx.aggregated(False)
        else:
            child_ctx = ctx.transformed()
        for child in node.iter_expressions():
            self.visit(child, scope, child_ctx, into)

    def _window(self, node: exp.Expression, scope: Scope, ctx: _Ctx, into: Deps) -> None:
        """``f(x) OVER (PARTITION BY p ORDER BY o)``: x as ``f`` makes it, p and o WINDOW; ``OVER w`` reads the
        named window ``w`` of the SELECT's WINDOW clause."""
        self.visit(node.this, scope, ctx, into)
        specs = [node]
        named = node.args.get("alias")
        if isinstance(named, exp.Identifier):
            specs += [w for w in scope.expression.args.get("windows") or []
                      if w.name.lower() == named.name.lower()]
        for spec in specs:
            for key in ("partition_by", "order"):
                part = spec.args.get(key)
                for child in (part if isinstance(part, list) else [part] if part is not None else []):
                    self.visit(child, scope, ctx.as_indirect("WINDOW"), into)

    def _case(self, node: exp.Expression, scope: Scope, ctx: _Ctx, into: Deps) -> None:
        """CASE: the results transformed, the conditions (and a compared ``CASE x``) CONDITIONAL."""
        inner, cond = ctx.transformed(), ctx.as_indirect("CONDITIONAL")
        for branch in node.args.get("ifs") or []:
            self.visit(branch.this, scope, cond, into)
            self.visit(branch.args["true"], scope, inner, into)
        if node.this is not None:
            self.visit(node.this, scope, cond, into)
        if node.args.get("default") is not None:
            self.visit(node.args["default"], scope, inner, into)

    def _if(self, node: exp.Expression, scope: Scope, ctx: _Ctx, into: Deps) -> None:
        """IF(c, a, b): a and b transformed, c CONDITIONAL."""
        self.visit(node.this, scope, ctx.as_indirect("CONDITIONAL"), into)
        for key in ("true", "false"):
            if node.args.get(key) is not None:
                self.visit(node.args[key], scope, ctx.transformed(), into)

    def _filter(self, node: exp.Expression, scope: Scope, ctx: _Ctx, into: Deps) -> None:
        """``agg(x) FILTER (WHERE c)``: x as the aggregate makes it, c FILTER."""
        self.visit(node.this, scope, ctx, into)
        self.visit(node.expression, scope, ctx.as_indirect("FILTER"), into)

    def _within_group(self, node: exp.Expression, scope: Scope, ctx: _Ctx, into: Deps) -> None:
        """``f(args) WITHIN GROUP (ORDER BY y)``: a percentile aggregates y (its arguments are constants); an
        ordered aggregate of columns (``LISTAGG(x) WITHIN GROUP (ORDER BY y)``) aggregates x and sorts by y."""
        agg = node.this
        reads_columns = any(True for _ in agg.find_all(exp.Column))
        self.visit(agg, scope, ctx, into)
        inner = ctx.as_indirect("SORT") if reads_columns else ctx.aggregated(_masks(agg))
        for ordered in node.expression.expressions if isinstance(node.expression, exp.Order) else []:
            self.visit(ordered, scope, inner, into)

    def _order(self, node: exp.Expression, scope: Scope, ctx: _Ctx, into: Deps) -> None:
        """ORDER BY inside an expression (``STRING_AGG(x, ',' ORDER BY y)``): x the value, y SORT."""
        if node.this is not None:
            self.visit(node.this, scope, ctx, into)
        for ordered in node.expressions:
            self.visit(ordered, scope, ctx.as_indirect("SORT"), into)

    def _in(self, node: exp.Expression, scope: Scope, ctx: _Ctx, into: Deps) -> None:
        """``x IN (SELECT ...)``: x is compared (a value, transformed); the subquery only decides (FILTER)."""
        self.visit(node.this, scope, ctx.transformed(), into)
        rest = ctx if ctx.indirect else _Ctx("FILTER") if node.args.get("query") is not None else ctx.transformed()
        for key in ("query", "expressions", "unnest"):
            part = node.args.get(key)
            for child in (part if isinstance(part, list) else [part] if part is not None else []):
                self.visit(child, scope, rest, into)

    _SPECIAL = {exp.Window: _window, exp.Case: _case, exp.If: _if, exp.Filter: _filter,
                exp.WithinGroup: _within_group, exp.Order: _order, exp.In: _in}

    def _subquery(self, node: exp.Expression, scope: Scope, ctx: _Ctx, into: Deps) -> None:
        """A subquery inside an expression (scalar, IN, EXISTS): all it reads, through ``ctx``."""
        target = node.this if isinstance(node, exp.Subquery) else node
        for child in scope.subquery_scopes + scope.set_operation_scopes:
            if child.expression is target or child.expression is node:
                outer = ctx.role() if ctx.indirect else Role("DIRECT", "TRANSFORMATION", ctx.masked)
                if not ctx.indirect and ctx.subtype == "AGGREGATION":
                    outer = Role("DIRECT", "AGGREGATION", ctx.masked)
                for _, deps in self.outputs(child):
                    for src, roles in deps.items():
                        _add(into, src, (_then(outer, r) for r in roles))
                return
        # not a scope of its own (sqlglot inlined it): walk it here
        for part in target.iter_expressions():
            self.visit(part, scope, ctx, into)

    def _column(self, col: exp.Column, scope: Scope, ctx: _Ctx, into: Deps, path: tuple[str, ...],
                *, quiet: bool = False) -> None:
        source, found_in = _source(col, scope)
        name = col.name
        if isinstance(source, exp.Table):
            key = table_key(source)
            _add(into, (key, self._real_path(key, ".".join([name, *path]))), [ctx.role()])
            return
        if isinstance(source, Scope):
            expr = source.expression
            if isinstance(expr, exp.Lateral) and isinstance(expr.this, (exp.Subquery, exp.Query)):
                # LATERAL (SELECT ...): a derived table (its query is the lateral scope's own source)
                source = next((v for v in source.sources.values()
                               if isinstance(v, Scope) and isinstance(v.expression, exp.Query)), source)
            elif isinstance(expr, (exp.Unnest, exp.Lateral)):
                if not _within(col, expr):
                    self._element(expr, name, path, source, found_in, ctx, into)
                    return
                source = None  # a name in the array it unnests (which no schema placed) is not its element
            if source is not None and self._through(source, name, path, ctx.role(), into):
                return
        if not quiet:
            self.unresolved.append(".".join([*([col.table] if col.table and source is not None else []),
                                             _name(col), *path]))

    def _through(self, source: Scope, name: str, path: tuple[str, ...], role: Role, into: Deps) -> bool:
        """Column ``name`` of a derived table, CTE or union: what it derives from, through ``role``."""
        for out_name, deps in self.outputs(source):
            if out_name.lower() == name.lower():
                for (t, p), roles in deps.items():
                    for r in roles:
                        # a nested field of an unchanged column is that column's nested field
                        sub = ".".join([p, *path]) if path and r == _SELF else p
                        _add(into, (t, self._real_path(t, sub) if sub != p else p), [_then(role, r)])
                return True
        return False

    def _element(self, expr: exp.Expression, name: str, path: tuple[str, ...], source: Scope, outer: Scope,
                 ctx: _Ctx, into: Deps) -> None:
        """A column of ``UNNEST(array)`` / ``LATERAL VIEW explode(array)``: the array's element (the column
        alias) or one of the element's fields."""
        offset = expr.args.get("offset")
        sub: tuple[str, ...]
        if isinstance(offset, exp.Identifier) and offset.name.lower() == name.lower():
            sub, ctx = (), ctx.transformed()  # WITH OFFSET / ORDINALITY: the element's place in the array
        else:
            sub = _element_path(expr, name, path)
        scope = source if source.sources else outer
        for array in _arrays(expr):
            deps: Deps = {}
            self.visit(array, scope, _Ctx(), deps)
            for (t, p), roles in deps.items():
                for r in roles:
                    full = ".".join([p, *sub]) if sub and r == _SELF else p
                    _add(into, (t, self._real_path(t, full)), [_then(ctx.role(), r)])


def _arrays(expr: exp.Expression) -> list[exp.Expression]:
    """The arrays an ``UNNEST`` or a ``LATERAL VIEW`` function unnests."""
    fn = expr.this
    if isinstance(expr, exp.Unnest):
        return list(expr.expressions)
    if isinstance(fn, exp.Explode) and fn.this is not None:
        return [fn.this]
    if isinstance(fn, exp.Explode | exp.Posexplode) or \
            (isinstance(fn, exp.Func) and fn.name.upper() in _ARRAY_FUNCTIONS):
        return list(fn.expressions)
    return [fn]


def _element_path(expr: exp.Expression, name: str, path: tuple[str, ...]) -> tuple[str, ...]:
    """Where column ``name`` (then ``path``) of an unnested array is in the array's element: the element itself
    (it names the column alias), else one of its fields."""
    alias = expr.args.get("alias")
    aliases = [c.name.lower() for c in alias.columns] if isinstance(alias, exp.TableAlias) else []
    if name.lower() in aliases if aliases else _is_unnest_alias(expr, name):
        return path
    return (name, *path)


def _source(col: exp.Column, scope: Scope) -> tuple[Any, Scope]:
    """What a column reads (a table or a scope) and the scope that names it: its table alias in this scope or an
    outer one (a correlated subquery), or the only source of the scope; ``None`` if it cannot be placed."""
    if not col.table:
        return (next(iter(scope.sources.values())) if len(scope.sources) == 1 else None), scope
    s: Scope | None = scope
    while s is not None:
        if col.table in s.sources:
            return s.sources[col.table], s
        s = s.parent
    return None, scope


def _within(node: exp.Expression, ancestor: exp.Expression) -> bool:
    """Whether ``node`` is inside ``ancestor``."""
    parent = node.parent
    while parent is not None and parent is not ancestor:
        parent = parent.parent
    return parent is not None


def _is_unnest_alias(expr: exp.Expression, name: str) -> bool:
    alias = expr.args.get("alias")
    return isinstance(alias, exp.TableAlias) and alias.name.lower() == name.lower()


def _output_name(projection: exp.Expression) -> str:
    """A SELECT's column name: its alias (or column), lower-case unless quoted (SQL names are case-insensitive)."""
    ident = projection.args.get("alias") if isinstance(projection, exp.Alias) else None
    if ident is None and isinstance(projection, exp.Column):
        ident = projection.this
    if isinstance(ident, exp.Identifier):
        return ident.name if ident.quoted else ident.name.lower()
    return projection.alias_or_name or projection.sql()


def _dotted(node: exp.Dot) -> tuple[exp.Column | None, tuple[str, ...]]:
    """``col.a.b`` (a Dot chain over a column) -> (the column, ("a", "b"))."""
    names: list[str] = []
    cur: exp.Expression = node
    while isinstance(cur, exp.Dot):
        names.append(cur.expression.name)
        cur = cur.this
    if isinstance(cur, exp.Column) and not isinstance(cur.this, exp.Star):
        return cur, tuple(reversed(names))
    return None, ()


def _masks(node: exp.Expression) -> bool:
    """A hash (by sqlglot's class, its SQL name or an unknown function's name) or a count."""
    if isinstance(node, _MASKING_CLASSES):
        return True
    if not isinstance(node, exp.Func):
        return False
    name = node.name.upper() if isinstance(node, exp.Anonymous) else node.sql_name().upper()
    return name in _MASKING_NAMES or type(node).__name__.upper().startswith(_MASKING_PREFIXES)


def _aggregates(node: exp.Expression) -> bool:
    """An aggregate (also over a window); LAG, LEAD and the other navigation functions only move values."""
    return isinstance(node, exp.AggFunc) and not isinstance(node, _NAVIGATION)


def _column_types(paths: Sequence[str]) -> dict[str, str]:
    """Top-level columns with a type sqlglot accepts (records as STRUCTs of their nested fields)."""
    tree: dict[str, Any] = {}
    for p in paths:
        node = tree
        for part in p.split("."):
            node = node.setdefault(part, {})

    def render(children: dict[str, Any]) -> str:
        if not children:
            return "STRING"
        return "STRUCT<" + ", ".join(f"{_quote(k)} {render(v)}" for k, v in children.items()) + ">"

    return {k: render(v) for k, v in tree.items()}


def _quote(name: str) -> str:
    return name if name.isidentifier() else '"' + name.replace('"', '""') + '"'


__all__ = ["BY_NAME_CONFIDENCE", "SOURCE_FORMAT", "SchemasNeeded", "SqlEdge", "SqlError", "SqlLineage", "SqlRename",
           "Statement", "check", "derive", "dialect_of", "match_tables", "parse_statements", "rename_of", "table_key"]
