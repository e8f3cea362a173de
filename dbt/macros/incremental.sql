{#-
    Incremental builds of the loan-level models (a dbt `--vars` window).

    A build may recompute only some Collection Periods: var `rebuild_from` maps a trust to the
    first Collection Period to recompute, e.g. {"caot-2015-4": "2018-11"}; that trust's rows of
    that period and every later one are recomputed (balances carry forward), its earlier rows and
    every other trust's rows are kept. Dagster's dbt step builds the var from the partitions of
    its run (dagster_project/transformation/dbt_args.py). Without the var, or on a first or
    --full-refresh build, every row is computed: a bare `dbt build` is never wrong, only slower.

    The models use dbt's delete+insert strategy keyed by (deal_id, collection_period): the
    recomputed periods replace the same periods in the table.
-#}

{#- True for the rows this build recomputes. -#}
{% macro is_rebuilt(deal_column='deal_id', period_column='collection_period') -%}
    {%- set window = var('rebuild_from', {}) -%}
    {%- if window and is_incremental() -%}
        (
        {%- for deal, period in window.items() %}
            ({{ deal_column }} = '{{ deal }}' and {{ period_column }} >= '{{ period }}')
            {{- ' or' if not loop.last }}
        {%- endfor %}
        )
    {%- else -%}
        true
    {%- endif -%}
{%- endmacro %}

{#- Model config shared by the loan-level incremental models. -#}
{% macro loan_level_incremental_config() -%}
    {{ config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['deal_id', 'collection_period'],
        on_schema_change='fail'
    ) }}
{%- endmacro %}
