"""Hand-written SQL for the statements that carry the crowd work loop's speed, portable between
PostgreSQL and SQLite.

Claim, draft and submit are the requests every worker makes again and again; through the ORM
each statement costs about a millisecond of Python to build (the load test, `bench/claims.py`,
ran at 15–18 items/s that way), so the statements of those three requests are written by hand:
the conditional `UPDATE … RETURNING` that takes a place of an item (with `FOR UPDATE SKIP LOCKED`
on PostgreSQL), the claim and submission inserts, the conditional lease and status updates, the
draft upsert, and the reads that find the worker's claim, standing and the claim with its study,
item and draft in one statement each. Table and column names come from the models (the SQL is
built once per process).

Everything else is Django's own: parameters are adapted by the backend (`connection.ops`), and
rows come back as model instances through `Manager.raw` (one model per row) or, for a row that
joins several models, through the converters the ORM's compiler applies to every column
(`SQLCompiler.get_converters` / `apply_converters`) and `Model.from_db`. No value is decoded by
hand, so the instances are the ORM's to the last field.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from weakref import WeakKeyDictionary

from django.db import connection, connections
from django.db.models.sql import Query

# per database connection (each thread has its own): {fields: (compiler, converters)}
_CONVERSIONS: WeakKeyDictionary = WeakKeyDictionary()


@cache
def table(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


@cache
def column(model, name: str) -> str:
    return connection.ops.quote_name(model._meta.get_field(name).column)


@cache
def _fields(model) -> tuple:
    return tuple(model._meta.concrete_fields)


@cache
def _attnames(model) -> list[str]:
    return [field.attname for field in _fields(model)]


@cache
def select_list(model, alias: str) -> str:
    return ", ".join(f"{alias}.{connection.ops.quote_name(f.column)}" for f in _fields(model))


def _conversion(fields: tuple) -> tuple:
    """The ORM's compiler on the current connection and the converters it applies to these
    columns when it reads them (the backend's and the fields' own), made once per connection."""
    current = connections[connection.alias]
    known = _CONVERSIONS.get(current)
    if known is None:
        known = _CONVERSIONS[current] = {}
    found = known.get(fields)
    if found is None:
        compiler = current.ops.compiler("SQLCompiler")(Query(fields[0].model), current, current.alias)
        found = known[fields] = (compiler, compiler.get_converters(
            [field.get_col(field.model._meta.db_table) for field in fields]))
    return found


def convert(fields, values) -> list:
    """Raw column values of these model fields, as the ORM gives them (Django's converters)."""
    compiler, converters = _conversion(tuple(fields))
    if not converters:
        return list(values)
    return next(compiler.apply_converters([values], converters))


def convert_one(model, name: str, value):
    """One raw column value of a model field, as the ORM gives it."""
    return convert((model._meta.get_field(name),), (value,))[0]


def build(model, values):
    """A model instance from one row of `select_list(model, …)` values."""
    return model.from_db(connection.alias, _attnames(model), convert(_fields(model), values))


def build_many(row, *models) -> list:
    """Instances of several models from one row of their `select_list`s, in order. A model whose
    columns are all NULL (the missing side of a LEFT JOIN) gives None."""
    out, start = [], 0
    for model in models:
        end = start + len(_fields(model))
        values = row[start:end]
        out.append(None if all(v is None for v in values) else build(model, values))
        start = end
    return out


def raw(model, sql: str, params=()) -> list:
    """The instances a statement returns (SELECT, or … RETURNING), built by `Manager.raw`; columns
    the statement does not return are deferred."""
    return list(model._default_manager.raw(sql, params))


def adapt_time(value: datetime):
    return connection.ops.adapt_datetimefield_value(value)


def adapt_json(value):
    return connection.ops.adapt_json_value(value, None)


def execute(sql: str, params=()) -> list[tuple]:
    """Run a statement that returns rows (SELECT, or … RETURNING) and fetch them all."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def execute_count(sql: str, params=()) -> int:
    """Run a statement and return the number of rows it changed."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def insert_if(model, names: list[str], values: list, condition: str, params=()) -> int | None:
    """Insert one row (fields by name, values already adapted) only while `condition`, an SQL
    expression checked in the same statement, holds; its id, or None when nothing was inserted."""
    columns = ", ".join(column(model, name) for name in names)
    marks = ", ".join(["%s"] * len(names))
    found = execute(f"INSERT INTO {table(model)} ({columns}) SELECT {marks} WHERE {condition} RETURNING id",
                    [*values, *params])
    return found[0][0] if found else None


def fetch_one(model, where: str, params=(), *, alias: str = "t"):
    """One instance of `model` matching a WHERE clause over `alias`, or None."""
    found = execute(f"SELECT {select_list(model, alias)} FROM {table(model)} {alias} WHERE {where}", params)
    return build(model, found[0]) if found else None


@cache
def pair_lock() -> tuple[str, str]:
    """A statement's prefix and a condition of its WHERE that take a transaction-long lock on a pair
    of numbers (parameters: the two, below 2**31, in the prefix) once the statement gets that far:
    PostgreSQL's advisory lock. Nothing on SQLite, whose write transactions are serialised anyway."""
    if connection.vendor != "postgresql":
        return "", ""
    return ("WITH held_pair AS (SELECT pg_advisory_xact_lock(%s::integer, %s::integer))",
            " AND EXISTS (SELECT 1 FROM held_pair)")


@cache
def skip_locked() -> str:
    """The row-locking suffix that lets concurrent claims pass each other (nothing on SQLite, whose
    write transactions are serialised anyway)."""
    return " FOR UPDATE SKIP LOCKED" if connection.features.has_select_for_update_skip_locked else ""
