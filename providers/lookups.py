"""`column__any=[values]`: the list as one array parameter, so that a statement's text does not change with how
many values a filter resolves to (issue #41, item 3).

With `IN (%s, %s, ...)` every length of list is a different statement: 250 matching profiles were 250 placeholders
(and, in the page, 250 `UNION ALL` branches to plan). PostgreSQL gets `column = ANY(%s)` with the list as one array
(integers always as bigint[], so the statement's parameter types do not change with the values' size either): one
statement per set of filters, whatever the values, for the planner, `pg_stat_statements` and EXPLAIN alike. Other
databases get the plain `IN` list. (Server-side prepared statements on top of it earned nothing measurable and were
removed: docs/performance.md, the ledger.)"""

from django.core.exceptions import EmptyResultSet
from django.db.models import Field, ForeignObject, Lookup


@ForeignObject.register_lookup
@Field.register_lookup
class AnyOf(Lookup):
    lookup_name = "any"
    prepare_rhs = False

    def get_prep_lookup(self):
        return sorted(self.rhs)

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        values = self.rhs
        if not values:
            raise EmptyResultSet  # like `__in=[]`: nothing matches
        if connection.vendor == "postgresql":
            if all(isinstance(value, int) for value in values):
                return f"{lhs} = ANY(%s::bigint[])", [*lhs_params, bigints(values)]
            return f"{lhs} = ANY(%s)", [*lhs_params, list(values)]
        return f"{lhs} IN ({', '.join(['%s'] * len(values))})", [*lhs_params, *values]


def bigints(values) -> list:
    """Integers as PostgreSQL bigints whatever their size (psycopg would send 50 as a smallint and 100000 as an
    integer), so a statement's parameter types do not change with the values either (PostgreSQL only)."""
    from psycopg.types.numeric import Int8

    return [Int8(value) for value in values]
