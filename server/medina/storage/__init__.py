"""Databases (SQLAlchemy Core; SQLite by default, PostgreSQL shared by several machines):
the tables, their versioned migrations, and the tournament store."""
