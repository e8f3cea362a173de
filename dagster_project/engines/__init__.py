"""The warehouse on another engine than DuckDB (docs/spark.md)."""
