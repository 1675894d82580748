"""The SQLite engine behind state.db: connection, writer, WAL, schema, migrations, and
the records it hands back."""
