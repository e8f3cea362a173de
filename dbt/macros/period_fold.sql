{#-
    A fold over ordered periods, for engines whose recursive CTEs cannot carry the step (Spark:
    no aggregate, window or sort may read the recursive reference). The model renders three
    statements separated by fold_separator():

      1. the starting rows;
      2. the step: the rows that follow the latest rows of each fold (it reads fold_latest());
      3. the result, read from fold_state().

    The materialization `period_fold` creates the state table from (1), inserts (2) until a step
    adds no row, creates the model's table from (3) and drops the state table. One step is one
    period of every fold at once, so the number of steps is the longest fold's number of periods.
-#}

{% macro fold_separator() -%}
    -- period_fold: next statement
{%- endmacro %}

{#- The state table of the model being built (the rows of every step so far). -#}
{% macro fold_state() -%}
    {{ return(api.Relation.create(
        database=this.database, schema=this.schema, identifier=this.identifier ~ '__fold_state', type='table'
    )) }}
{%- endmacro %}

{#- The latest rows of each fold (identified by `keys`; `order_column` numbers its periods), as a
    subquery for a FROM clause. -#}
{% macro fold_latest(keys, order_column='period_number') -%}
    (
        select state.*
        from {{ fold_state() }} as state
        inner join (
            select {{ keys | join(', ') }}, max({{ order_column }}) as latest
            from {{ fold_state() }}
            group by {{ keys | join(', ') }}
        ) as latest
            on {% for key in keys %}state.{{ key }} = latest.{{ key }} and {% endfor %}state.{{ order_column }} = latest.latest
    ) as fold_latest
{%- endmacro %}

{#- The number of rows of the state table (a step that adds none ends the fold). -#}
{% macro fold_rows(state_relation) -%}
    {{ return(run_query('select count(*) from ' ~ state_relation).columns[0].values()[0]) }}
{%- endmacro %}

{% materialization period_fold, adapter='spark' %}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set state_relation = fold_state() -%}
    {%- set statements = sql.split(fold_separator()) -%}
    {%- if statements | length != 3 -%}
        {{ exceptions.raise_compiler_error(
            'period_fold: ' ~ this ~ ' must render three statements separated by fold_separator(), not '
            ~ statements | length
        ) }}
    {%- endif -%}
    {%- set start_sql, step_sql, result_sql = statements -%}

    {{ run_hooks(pre_hooks) }}

    {%- do adapter.drop_relation(state_relation) -%}
    {%- call statement('fold_start') -%}
        {{ create_table_as(False, state_relation, start_sql) }}
    {%- endcall -%}

    {#- Jinja has no `break`: the loop skips its remaining items once a step adds nothing. -#}
    {%- set fold = namespace(rows=fold_rows(state_relation), more=true, steps=0) -%}
    {%- for _step in range(10000) if fold.more -%}
        {%- call statement('fold_step') -%}
            insert into {{ state_relation }}
            {{ step_sql }}
        {%- endcall -%}
        {%- set rows = fold_rows(state_relation) -%}
        {%- set fold.more = rows > fold.rows -%}
        {%- set fold.rows = rows -%}
        {%- set fold.steps = fold.steps + 1 -%}
    {%- endfor -%}
    {%- if fold.more -%}
        {{ exceptions.raise_compiler_error('period_fold: ' ~ this ~ ' did not end after ' ~ fold.steps ~ ' steps') }}
    {%- endif -%}

    {%- do adapter.drop_relation(target_relation) -%}
    {%- call statement('main') -%}
        {{ create_table_as(False, target_relation, result_sql) }}
    {%- endcall -%}
    {%- do adapter.drop_relation(state_relation) -%}

    {{ run_hooks(post_hooks) }}

    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

{#- How the waterfall (int_waterfall__distribution_dates) is built: on DuckDB incremental, a
    recursive CTE from each trust's last date kept (macros/incremental.sql,
    delete_dates_to_recompute); on Spark the period_fold materialization, every date computed. -#}
{% macro fold_config() -%}{{ return(adapter.dispatch('fold_config', 'caot')()) }}{%- endmacro %}
{% macro default__fold_config() -%}
    {{ config(
        materialized='incremental',
        incremental_strategy='append',
        on_schema_change='fail',
        pre_hook="{{ delete_dates_to_recompute() }}"
    ) }}
{%- endmacro %}
{% macro spark__fold_config() -%}{{ config(materialized='period_fold') }}{%- endmacro %}
