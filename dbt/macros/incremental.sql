{#-
    Incremental builds of the loan-level models (a window of Collection Periods).

    A build may recompute only some Collection Periods: the environment variable
    CAOT_REBUILD_FROM (JSON, read by rebuild_from() below) maps a trust to the first Collection
    Period to recompute, e.g. {"caot-2015-4": "2018-11"}; that trust's rows of that period and
    every later one are recomputed (balances carry forward), its earlier rows and every other
    trust's rows are kept. Dagster's dbt step sets it from the partitions of its run
    (dagster_project/transformation/dbt_args.py; it unsets it for a full rebuild). Without it,
    or on a first or --full-refresh build, every row is computed: a bare `dbt build` in a shell
    without the variable is never wrong, only slower.

    The models use dbt's delete+insert strategy keyed by (deal_id, collection_period): the
    recomputed periods replace the same periods in the table. The waterfall (one row per
    Distribution Date, each carrying the state of the one before) does not follow the window:
    with a window its pre-hook deletes each trust's dates from the first whose inputs changed
    (delete_dates_to_recompute), and the build appends them again.
-#}

{#- The build's window: {deal_id: first Collection Period to recompute}, from the environment
    variable CAOT_REBUILD_FROM; empty without it. Read only when dbt executes (`execute`), never
    while it parses, so a window of its own in every run keeps dbt's partial parsing (a change
    of `--vars` makes dbt parse the whole project again). -#}
{% macro rebuild_from() -%}
    {%- if not execute or flags.FULL_REFRESH -%}
        {{- return({}) -}}  {#- a --full-refresh build computes and tests every row, whatever is set #}
    {%- endif -%}
    {{- return(fromjson(env_var('CAOT_REBUILD_FROM', '{}'))) -}}
{%- endmacro %}

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

{#- A pre-hook for an incremental model that may have no row for a (trust, Collection Period) it
    recomputes (a period with no receivable outstanding has no strata): delete+insert deletes the
    keys of the new rows only, so the window's rows are deleted first and such a period keeps
    none. Nothing on a build that is not incremental (the table is created anew). -#}
{% macro delete_window_rows() -%}
    {%- if is_incremental() -%}
        delete from {{ this }} where {{ in_window() }}
    {%- endif -%}
{%- endmacro %}

{#- The pre-hook of the waterfall (int_waterfall__distribution_dates, one row per trust,
    Distribution Date and class). With a window (a monthly run): each trust's dates from
    the first one whose period inputs changed since it was computed (waterfall_recompute_from)
    are deleted, the earlier ones kept, whatever the run's partitions (a new or restated tape
    changes its date's pool figures, a restated market input its date's). Without one (a
    bare dbt build): every date, as the loan-level models recompute every row. Nothing on a
    build that is not incremental. -#}
{% macro delete_dates_to_recompute() -%}
    {%- if is_incremental() and rebuild_from() -%}
        delete from {{ this }} as kept
        using (
            {{ waterfall_recompute_from(this, ref('int_waterfall__period_inputs')) }}
        ) as recompute
        where kept.deal_id = recompute.deal_id and kept.period_number >= recompute.period_number
    {%- elif is_incremental() -%}
        delete from {{ this }}
    {%- endif -%}
{%- endmacro %}

{#- A mart computed row by row from one loan-level model (fct_receivable_period from the principal
    balances): on DuckDB a view, so its rows are stored once and a build writes nothing for it
    (readers' filters reach the table under it); on Spark a table, like the loan-level models. -#}
{% macro row_by_row_config() -%}
    {{ return(adapter.dispatch('row_by_row_config', 'caot')()) }}
{%- endmacro %}

{% macro default__row_by_row_config() -%}
    {{ config(materialized='view') }}
{%- endmacro %}

{% macro spark__row_by_row_config() -%}
    {{ config(materialized='table') }}
{%- endmacro %}

{#- True for the rows of the build's window (every row without a window). The trusts are grouped
    by their first period, and the earliest period bounds every row first: DuckDB applies a bound
    on one column while it scans (and can skip row groups below it), where a disjunction per trust
    would be evaluated on every row of the table. -#}
{% macro in_window(deal_column='deal_id', period_column='collection_period') -%}
    {%- set by_period = window_by_period() -%}
    {%- if by_period -%}
        ({{ period_column }} >= '{{ (by_period.keys() | sort)[0] }}' and (
        {{- period_terms(by_period, deal_column, period_column, '>=') }}
        ))
    {%- else -%}
        true
    {%- endif -%}
{%- endmacro %}

{#- The trusts of the window (rebuild_from()) by their first period in the window ({period: [deal_id]});
    by the month before it with `month_before_window` (a period not named YYYY-MM left out). -#}
{% macro window_by_period(month_before_window=false) -%}
    {%- set by_period = {} -%}
    {%- for deal, period in rebuild_from().items() -%}
        {%- set key = month_before(period) if month_before_window else period -%}
        {%- if key -%}
            {%- do by_period.setdefault(key, []).append(deal) -%}
        {%- endif -%}
    {%- endfor -%}
    {{- return(by_period) -}}
{%- endmacro %}

{#- One test per period of `by_period` (window_by_period), joined by `or`:
    `period_column <operator> period and deal_column in (its trusts)`. -#}
{% macro period_terms(by_period, deal_column, period_column, operator) -%}
    {%- for period in by_period.keys() | sort %}
        ({{ period_column }} {{ operator }} '{{ period }}' and {{ deal_column }} in ('{{ by_period[period] | join("', '") }}'))
        {{- ' or' if not loop.last }}
    {%- endfor %}
{%- endmacro %}

{#-
    dbt's hook for a generic test's `where` config (dbt docs, "where"), extended: a test of a
    model marked `meta: {tested_in_window: true}` (the loan-level models and the tapes' staging
    views, one row per receivable and Collection Period) checks only the rows of the build's
    window. The rows outside it are the ones the build kept; the build that wrote them tested
    them. A build without a window (--full-refresh, a bare dbt build without CAOT_REBUILD_FROM)
    tests every row.
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
    Each receivable of `among` with rows kept from the builds before this one (the rows outside the
    window): deal_id, receivable_id and `last_kept`, a struct of `fields` (name: column) from its
    kept row with the highest `order_column` (a column that grows from one Collection Period to
    the next: a period or step number); only the fields a seed needs, not the whole row.
    `among`: a relation with deal_id and receivable_id (the receivables with rows in the window);
    `relation`: the table kept (the model itself by default). `and_whole_period_before`: also every
    other receivable on the tape of the period just before the window (one that left the pool
    there, or is missing from the window's tapes).

    A receivable on the tape of the period just before its trust's window has its last kept row
    there (the order grows with the period): those rows are found by that period alone. Only the
    others (absent from that tape, or a window from a trust's first period) are looked for among
    every kept row, so a monthly build groups one period's rows, not the whole history.
-#}
{% macro last_kept_rows(fields, order_column, among, relation=none, and_whole_period_before=false) -%}
    {%- set kept_relation = relation if relation is not none else this -%}
    with

    before_window as (
        select
            previous_build.deal_id,
            previous_build.receivable_id,
            max_by({{ record(fields) }}, previous_build.{{ order_column }}) as last_kept
        from {{ kept_relation }} as previous_build
        where
            {{ period_before_window('previous_build.deal_id', 'previous_build.collection_period') }}
            {%- if not and_whole_period_before %}
            and exists (
                select 1 from {{ among }}
                where
                    {{ among }}.deal_id = previous_build.deal_id
                    and {{ among }}.receivable_id = previous_build.receivable_id
            )
            {%- endif %}
        group by previous_build.deal_id, previous_build.receivable_id
    ),

    elsewhere as (
        select distinct
            {{ among }}.deal_id,
            {{ among }}.receivable_id
        from {{ among }}
        where not exists (
            select 1 from before_window
            where
                before_window.deal_id = {{ among }}.deal_id
                and before_window.receivable_id = {{ among }}.receivable_id
        )
    )

    select * from before_window
    union all
    -- the kept rows are those outside the window (or of no period, such as a fold's step 0)
    select
        previous_build.deal_id,
        previous_build.receivable_id,
        max_by({{ record(fields) }}, previous_build.{{ order_column }}) as last_kept
    from {{ kept_relation }} as previous_build
    inner join elsewhere
        on previous_build.deal_id = elsewhere.deal_id and previous_build.receivable_id = elsewhere.receivable_id
    where
        {%- if not rebuild_from() %}
            false  -- no window: every row is recomputed, none kept
        {%- else %}
            previous_build.collection_period is null
            or not {{ in_window('previous_build.deal_id', 'previous_build.collection_period') }}
        {%- endif %}
    group by previous_build.deal_id, previous_build.receivable_id
{%- endmacro %}

{#- The build's window as a relation window_starts (deal_id, first_period), one row per trust of
    the window (rebuild_from()) (none without it). -#}
{% macro window_starts() -%}
    (
    {%- for deal, period in rebuild_from().items() %}
        select '{{ deal }}' as deal_id, '{{ period }}' as first_period
        {{- ' union all' if not loop.last }}
    {%- else %}
        select null::varchar as deal_id, null::varchar as first_period where false
    {%- endfor %}
    ) as window_starts
{%- endmacro %}

{#- True for the rows of the Collection Period just before each trust's window (the calendar
    month before the window's period, as the tapes name periods, YYYY-MM); false for a period
    named otherwise (last_kept_rows then looks among every kept row). -#}
{% macro period_before_window(deal_column='deal_id', period_column='collection_period') -%}
    {%- set by_period = window_by_period(month_before_window=true) -%}
    {%- if by_period -%}
        ({{ period_terms(by_period, deal_column, period_column, '=') }}
        )
    {%- else -%}
        false
    {%- endif -%}
{%- endmacro %}

{#- True for every row from the month before the window's earliest period on (a bound DuckDB
    applies while it scans, before an exact test of the window that it cannot push down): each
    Collection Period is a calendar month (Art. I), so every trust's period before its window is
    at or after it. True for every row in a build that is not incremental (every row is computed),
    without a window, or when a period is not named YYYY-MM. -#}
{% macro from_month_before_window(period_column='collection_period') -%}
    {%- set periods = rebuild_from().values() | list | sort if is_incremental() else [] -%}
    {%- set before = month_before(periods[0]) if periods else none -%}
    {%- if before -%}{{ period_column }} >= '{{ before }}'{%- else -%}true{%- endif -%}
{%- endmacro %}

{#- The month before a period named YYYY-MM ('2021-01' -> '2020-12'); none for another name. -#}
{% macro month_before(period) -%}
    {%- set parts = period.split('-') -%}
    {%- if parts | length == 2 and parts[0] | length == 4 and parts[1] | length == 2
        and parts[0].isdigit() and parts[1].isdigit() -%}
        {%- set year, month = parts[0] | int, parts[1] | int -%}
        {{- return((year - 1) ~ '-12' if month == 1 else year ~ '-' ~ '%02d' | format(month - 1)) -}}
    {%- endif -%}
    {{- return(none) -}}
{%- endmacro %}
