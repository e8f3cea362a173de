"""Plain-Python reference implementations written from the agreement, independent of the SQL."""
