"""The dbt project as Dagster assets."""
