{#-
    Where the sources live on each engine (profiles.yml). DuckDB: the Dagster ingestion assets write
    the raw and quality schemas into the warehouse file itself, nothing to register. Spark: each
    source table is a Parquet folder, <CAOT_SPARK_SOURCES>/<schema>/<table>/ (written by
    `python -m dagster_project.engines.parquet_sources`), registered as an external table at the
    start of every dbt invocation (dbt_project.yml on-run-start); only the sources an enabled model
    reads (the reconciliation tables exist only in reconciliation mode).
-#}
{% macro register_sources() -%}
    {{ return(adapter.dispatch('register_sources', 'caot')()) }}
{%- endmacro %}

{% macro default__register_sources() -%}{%- endmacro %}

{% macro spark__register_sources() -%}
    {%- set root = env_var('CAOT_SPARK_SOURCES', '../data/spark/sources') -%}
    {%- if execute -%}
        {%- set used = [] -%}
        {%- for node in graph.nodes.values() -%}
            {%- for parent in node.depends_on.nodes if parent.startswith('source.') and parent not in used -%}
                {%- do used.append(parent) -%}
            {%- endfor -%}
        {%- endfor -%}
        {%- for source_id in used -%}
            {%- set source = graph.sources[source_id] -%}
            {%- do run_query('create database if not exists ' ~ source.schema) -%}
            {%- do run_query('drop table if exists ' ~ source.schema ~ '.' ~ source.identifier) -%}
            {%- do run_query(
                'create table ' ~ source.schema ~ '.' ~ source.identifier
                ~ " using parquet location '" ~ root ~ '/' ~ source.schema ~ '/' ~ source.identifier ~ "'"
            ) -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro %}
