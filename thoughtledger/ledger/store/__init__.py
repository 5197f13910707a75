"""Store backends behind one contract: memory, SQLite, PostgreSQL."""
