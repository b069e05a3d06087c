"""Hand-written SQL for the crowd work loop, portable between PostgreSQL and SQLite.

Claim, draft and submit are the requests every worker makes again and again; through the ORM
each statement costs about a millisecond of Python to build, so those three paths speak SQL
directly, through this module: table and column names come from the models (the SQL is built once
per process), values are adapted and decoded the way the ORM would (JSON, aware datetimes,
booleans, decimals), and rows come back as model instances, so the rest of the code cannot tell
the difference.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import cache

from django.db import connection, models
from django.utils import timezone
from django.utils.dateparse import parse_datetime


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
def select_list(model, alias: str) -> str:
    return ", ".join(f"{alias}.{connection.ops.quote_name(f.column)}" for f in _fields(model))


def decode(field, value):
    """A raw column value as the ORM would give it."""
    if value is None:
        return None
    if isinstance(field, models.JSONField):
        return json.loads(value) if isinstance(value, str | bytes) else value
    if isinstance(field, models.DateTimeField):
        if isinstance(value, str):
            value = parse_datetime(value)
        if isinstance(value, datetime) and timezone.is_naive(value):
            value = value.replace(tzinfo=UTC)
        return value
    if isinstance(field, models.BooleanField):
        return bool(value)
    if isinstance(field, models.DecimalField):
        return field.to_python(value)  # SQLite hands back floats or strings
    if isinstance(field, models.FloatField) and not isinstance(value, float):
        return float(value)
    return value


@cache
def _decoding(model) -> tuple[list[str], list[tuple[int, object]]]:
    """A model's attribute names, and the (position, field) of the columns whose raw value needs decoding."""
    fields = _fields(model)
    plain = (models.CharField, models.TextField, models.IntegerField, models.AutoField, models.ForeignKey)
    needs = [(i, f) for i, f in enumerate(fields) if not isinstance(f, plain)]
    return [f.attname for f in fields], needs


def build(model, values):
    """A model instance from one row of `select_list(model, …)` values."""
    names, needs = _decoding(model)
    values = list(values)
    for position, field in needs:
        values[position] = decode(field, values[position])
    return model.from_db(connection.alias, names, values)


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


def insert(model, names: list[str], values: list) -> int:
    """Insert one row (fields by name, values already adapted) and return its id."""
    columns = ", ".join(column(model, name) for name in names)
    marks = ", ".join(["%s"] * len(names))
    return execute(f"INSERT INTO {table(model)} ({columns}) VALUES ({marks}) RETURNING id", values)[0][0]


def fetch_one(model, where: str, params=(), *, alias: str = "t"):
    """One instance of `model` matching a WHERE clause over `alias`, or None."""
    rows = execute(f"SELECT {select_list(model, alias)} FROM {table(model)} {alias} WHERE {where}", params)
    return build(model, rows[0]) if rows else None


@cache
def skip_locked() -> str:
    """The row-locking suffix that lets concurrent claims pass each other (nothing on SQLite, whose
    write transactions are serialised anyway)."""
    return " FOR UPDATE SKIP LOCKED" if connection.features.has_select_for_update_skip_locked else ""
