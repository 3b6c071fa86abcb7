"""How the writing services write many rows: in batches of BATCH_SIZE, and on PostgreSQL one
`UPDATE ... FROM unnest(arrays)` per statement rather than bulk_update's CASE WHEN per row."""

from __future__ import annotations

from django.db import connection

BATCH_SIZE = 2000


def bulk_set(model, ids: list[int], **columns: list) -> None:
    """Set per-row values of a few columns for many rows: on PostgreSQL one `UPDATE ... FROM unnest(arrays)` (see
    ingest._offers_update for why not bulk_update's CASE WHEN), elsewhere bulk_update."""
    if not ids:
        return
    fields = [model._meta.get_field(name) for name in columns]
    if connection.vendor != "postgresql":
        objects = [model(pk=pk) for pk in ids]
        for name, values in columns.items():
            for obj, value in zip(objects, values, strict=True):
                setattr(obj, name, value)
        model.objects.bulk_update(objects, list(columns), batch_size=BATCH_SIZE)
        return
    quote = connection.ops.quote_name
    names = [quote(field.column) for field in fields]
    sql = (
        f"UPDATE {quote(model._meta.db_table)} AS o SET {', '.join(f'{name} = v.{name}' for name in names)} "
        f"FROM unnest(%s::bigint[], {', '.join(f'%s::{field.db_type(connection)}[]' for field in fields)}) "
        f"AS v(id, {', '.join(names)}) WHERE o.id = v.id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [ids, *columns.values()])
