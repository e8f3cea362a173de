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

{#- True for the rows this build recomputes (in an incremental model's own SQL). -#}
{% macro is_rebuilt(deal_column='deal_id', period_column='collection_period') -%}
    {%- if is_incremental() -%}
        {{ in_window(deal_column, period_column) }}
    {%- else -%}
        true
    {%- endif -%}
{%- endmacro %}

{#- Model config shared by the loan-level incremental models. On Spark (parquet tables, no
    delete+insert) they are tables, every build computes every row. -#}
{% macro loan_level_incremental_config() -%}
    {{ return(adapter.dispatch('loan_level_incremental_config', 'caot')()) }}
{%- endmacro %}

{% macro spark__loan_level_incremental_config() -%}
    {{ config(materialized='table') }}
{%- endmacro %}

{% macro default__loan_level_incremental_config() -%}
    {{ config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['deal_id', 'collection_period'],
        on_schema_change='fail'
    ) }}
{%- endmacro %}

{#- True for the rows of the build's window (every row without the var). -#}
{% macro in_window(deal_column='deal_id', period_column='collection_period') -%}
    {%- set window = var('rebuild_from', {}) -%}
    {%- if window -%}
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

{#-
    dbt's hook for a generic test's `where` config (dbt docs, "where"), extended: a test of a
    model marked `meta: {tested_in_window: true}` (the loan-level models and the tapes' staging
    views, one row per receivable and Collection Period) checks only the rows of the build's
    window. The rows outside it are the ones the build kept; the build that wrote them tested
    them. A build without the window (--full-refresh, a bare dbt build) tests every row.
-#}
{% macro get_where_subquery(relation) -%}
    {%- set filters = [] -%}
    {%- if config.get('where') -%}
        {%- do filters.append(config.get('where')) -%}
    {%- endif -%}
    {%- for parent in model.depends_on.nodes -%}
        {%- set node = graph.nodes.get(parent) -%}
        {%- if node and node.alias == relation.identifier and node.config.meta.get('tested_in_window') -%}
            {%- do filters.append(in_window()) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if filters -%}
        {%- do return('(select * from ' ~ relation ~ ' where ' ~ filters | join(' and ') ~ ')') -%}
    {%- else -%}
        {%- do return(relation) -%}
    {%- endif -%}
{%- endmacro %}

{#-
    delete+insert on DuckDB deletes the target's rows whose key is among the new rows' keys. With
    a key of several columns dbt-duckdb writes `delete ... using <new rows> where <keys equal>`, a
    join of every target row of a period with every new row of it (the key is a trust and a
    Collection Period, shared by each of its receivable-periods): a rebuild from the middle of a
    full-size trust's life took minutes. dbt-core's own form, a semi-join on the distinct keys
    (`where (keys) in (select distinct keys ...)`), deletes the same rows; this project's
    dispatch of the macro (dbt's documented override of an adapter macro) uses it.
-#}
{% macro duckdb__get_delete_insert_merge_sql(target, source, unique_key, dest_columns, incremental_predicates) -%}
    {{ return(dbt.default__get_delete_insert_merge_sql(target, source, unique_key, dest_columns, incremental_predicates)) }}
{%- endmacro %}

{#-
    Each receivable's last row kept from the builds before this one (the rows outside the window),
    in an incremental model's own SQL: deal_id, receivable_id and `last_kept`, a struct of `fields`
    (name: column) from its row with the highest `order_column`; only the fields a seed needs, not
    the whole row (a struct of every column, built for each of the millions of kept rows, costs a
    month's build time). `among`: a relation with deal_id and receivable_id, to keep only its
    receivables (those with rows in the window).
-#}
{% macro last_kept_rows(fields, order_column, among=none) -%}
    select
        previous_build.deal_id,
        previous_build.receivable_id,
        max_by({{ record(fields) }}, previous_build.{{ order_column }}) as last_kept
    from {{ this }} as previous_build
    where
        not coalesce({{ is_rebuilt('previous_build.deal_id', 'previous_build.collection_period') }}, false)
        {%- if among %}
            and exists (
                select 1 from {{ among }}
                where
                    {{ among }}.deal_id = previous_build.deal_id
                    and {{ among }}.receivable_id = previous_build.receivable_id
            )
        {%- endif %}
    group by previous_build.deal_id, previous_build.receivable_id
{%- endmacro %}
