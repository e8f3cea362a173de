{#-
    The constructs that differ between the engines the project runs on (profiles.yml: DuckDB, the
    default, and Apache Spark), one dispatched macro each (dbt's adapter.dispatch); default__ is
    DuckDB. The other dispatched macros: simple_interest_fold, loan_level_incremental_config,
    distribution_waterfall, fold_config and register_sources. No model uses engine-only
    syntax outside them (DuckDB's incremental branches aside).
-#}

{#- Integer cents wide enough for products of cents and rates (HUGEINT; Spark: DECIMAL(38, 0)). -#}
{% macro cents_type() -%}{{ return(adapter.dispatch('cents_type', 'caot')()) }}{%- endmacro %}
{% macro default__cents_type() -%}hugeint{%- endmacro %}
{% macro spark__cents_type() -%}decimal(38, 0){%- endmacro %}

{#- Integer division of a non-negative integer by a positive one, exact (Spark's `div` returns
    BIGINT and would overflow). -#}
{% macro floor_div(numerator, denominator) -%}
    {{ return(adapter.dispatch('floor_div', 'caot')(numerator, denominator)) }}
{%- endmacro %}
{% macro default__floor_div(numerator, denominator) -%}(({{ numerator }}) // ({{ denominator }})){%- endmacro %}
{% macro spark__floor_div(numerator, denominator) -%}
    cast((({{ numerator }}) - pmod({{ numerator }}, {{ denominator }})) / ({{ denominator }}) as decimal(38, 0))
{%- endmacro %}

{#- SHA-256 of a string, as 64 hex digits. -#}
{% macro sha256_hex(text) -%}{{ return(adapter.dispatch('sha256_hex')(text)) }}{%- endmacro %}
{% macro default__sha256_hex(text) -%}sha256({{ text }}){%- endmacro %}
{% macro spark__sha256_hex(text) -%}sha2({{ text }}, 256){%- endmacro %}

{#- A struct from a Jinja dict of field name -> SQL expression (in the dict's order). -#}
{% macro record(fields) -%}{{ return(adapter.dispatch('record', 'caot')(fields)) }}{%- endmacro %}
{% macro default__record(fields) -%}
    {
    {%- for name, expression in fields.items() %}
        '{{ name }}': {{ expression }}{{ ',' if not loop.last }}
    {%- endfor %}
    }
{%- endmacro %}
{% macro spark__record(fields) -%}
    named_struct(
    {%- for name, expression in fields.items() %}
        '{{ name }}', {{ expression }}{{ ',' if not loop.last }}
    {%- endfor %}
    )
{%- endmacro %}

{#- Strings joined with `separator` in the order of `order_by` (an aggregate). -#}
{% macro ordered_string_agg(text, separator, order_by, distinct=false) -%}
    {{ return(adapter.dispatch('ordered_string_agg', 'caot')(text, separator, order_by, distinct)) }}
{%- endmacro %}
{% macro default__ordered_string_agg(text, separator, order_by, distinct) -%}
    string_agg({{ 'distinct ' if distinct }}{{ text }}, {{ separator }} order by {{ order_by }})
{%- endmacro %}
{% macro spark__ordered_string_agg(text, separator, order_by, distinct) -%}
    listagg({{ 'distinct ' if distinct }}{{ text }}, {{ separator }}) within group (order by {{ order_by }})
{%- endmacro %}

{#- Days from `start` to `end` (dates; negative when `end` is earlier). -#}
{% macro days_between(start, end) -%}{{ return(adapter.dispatch('days_between', 'caot')(start, end)) }}{%- endmacro %}
{% macro default__days_between(start, end) -%}({{ end }} - {{ start }}){%- endmacro %}
{% macro spark__days_between(start, end) -%}datediff({{ end }}, {{ start }}){%- endmacro %}

{#- `body` with `name` bound to the value of `value` (SQL has no `let`): a one-element list mapped
    by a lambda. -#}
{% macro let(name, value, body) -%}{{ return(adapter.dispatch('let', 'caot')(name, value, body)) }}{%- endmacro %}
{% macro default__let(name, value, body) -%}list_transform([{{ value }}], lambda {{ name }}: {{ body }})[1]{%- endmacro %}
{% macro spark__let(name, value, body) -%}transform(array({{ value }}), {{ name }} -> {{ body }})[0]{%- endmacro %}

{#- The keyword that makes DuckDB read a CTE's query at each reference instead of computing it once
    and holding the result in memory (Spark decides that itself). -#}
{% macro not_materialized_cte() -%}{{ return(adapter.dispatch('not_materialized_cte', 'caot')()) }}{%- endmacro %}
{% macro default__not_materialized_cte() -%}not materialized{%- endmacro %}
{% macro spark__not_materialized_cte() -%}{%- endmacro %}

{#- The last non-null value of `expression` in a window frame (write `over ...` after it). -#}
{% macro last_non_null(expression) -%}{{ return(adapter.dispatch('last_non_null', 'caot')(expression)) }}{%- endmacro %}
{% macro default__last_non_null(expression) -%}last_value({{ expression }} ignore nulls){%- endmacro %}
{% macro spark__last_non_null(expression) -%}last_value({{ expression }}, true){%- endmacro %}

{#- Every column of `relation` (a name in the FROM clause; all of them when none) but `columns`. -#}
{% macro star_except(columns, relation=none) -%}
    {{ return(adapter.dispatch('star_except', 'caot')(columns, relation)) }}
{%- endmacro %}
{% macro default__star_except(columns, relation) -%}
    {{ relation ~ '.' if relation }}* exclude ({{ columns | join(', ') }})
{%- endmacro %}
{% macro spark__star_except(columns, relation) -%}
    {{ relation ~ '.' if relation }}* except ({{ columns | join(', ') }})
{%- endmacro %}

{#- The marts that are read-time views (the prepayment speeds, the certificate tie-outs): views on
    DuckDB (computed when read, from the marts of the same file); tables on Spark, where a view
    would be recomputed across the cluster by every reader. -#}
{% macro view_materialization() -%}{{ return(adapter.dispatch('view_materialization', 'caot')()) }}{%- endmacro %}
{% macro default__view_materialization() -%}{{ return('view') }}{%- endmacro %}
{% macro spark__view_materialization() -%}{{ return('table') }}{%- endmacro %}

{#- Whether a query carries a row's columns through a window or an aggregate that reads only a
    few of them. DuckDB copies every column a window or a grouping carries, so there the query
    computes from the few columns and joins the result back to the row. Spark plans each
    reference to a CTE again (CTEs are inlined), so a second read doubles the plan of the query;
    there the query carries the whole row. -#}
{% macro carries_rows() -%}{{ return(adapter.dispatch('carries_rows', 'caot')()) }}{%- endmacro %}
{% macro default__carries_rows() -%}{{ return(false) }}{%- endmacro %}
{% macro spark__carries_rows() -%}{{ return(true) }}{%- endmacro %}

{#- The value of the row with the greatest (least) key among the rows whose value is not null:
    DuckDB's arg_max/arg_min (max_by/min_by) skip null values, Spark's max_by/min_by do not, so on
    Spark the key of a null value is nulled (rows with a null key are skipped on both). -#}
{% macro max_by_non_null(value, key) -%}{{ return(adapter.dispatch('max_by_non_null', 'caot')(value, key)) }}{%- endmacro %}
{% macro default__max_by_non_null(value, key) -%}max_by({{ value }}, {{ key }}){%- endmacro %}
{% macro spark__max_by_non_null(value, key) -%}
    max_by({{ value }}, case when {{ value }} is not null then {{ key }} end)
{%- endmacro %}
{% macro min_by_non_null(value, key) -%}{{ return(adapter.dispatch('min_by_non_null', 'caot')(value, key)) }}{%- endmacro %}
{% macro default__min_by_non_null(value, key) -%}min_by({{ value }}, {{ key }}){%- endmacro %}
{% macro spark__min_by_non_null(value, key) -%}
    min_by({{ value }}, case when {{ value }} is not null then {{ key }} end)
{%- endmacro %}

{#- The type of a column holding JSON text. -#}
{% macro json_type() -%}{{ return(adapter.dispatch('json_type', 'caot')()) }}{%- endmacro %}
{% macro default__json_type() -%}json{%- endmacro %}
{% macro spark__json_type() -%}string{%- endmacro %}

{#- A whole row of the relation named `alias` in the FROM clause, as one struct. -#}
{% macro row_record(alias) -%}{{ return(adapter.dispatch('row_record', 'caot')(alias)) }}{%- endmacro %}
{% macro default__row_record(alias) -%}{{ alias }}{%- endmacro %}
{% macro spark__row_record(alias) -%}struct({{ alias }}.*){%- endmacro %}

{#- One row per element of a list written out in SQL (a select-list item: `... as name`). -#}
{% macro unnest_list(elements) -%}{{ return(adapter.dispatch('unnest_list', 'caot')(elements)) }}{%- endmacro %}
{% macro default__unnest_list(elements) -%}unnest([{{ elements | join(', ') }}]){%- endmacro %}
{% macro spark__unnest_list(elements) -%}explode(array({{ elements | join(', ') }})){%- endmacro %}

{#- The list of `value` in the order of `order_by` (an aggregate; ties in no particular order). -#}
{% macro ordered_list(value, order_by) -%}{{ return(adapter.dispatch('ordered_list', 'caot')(value, order_by)) }}{%- endmacro %}
{% macro default__ordered_list(value, order_by) -%}list({{ value }} order by {{ order_by }}){%- endmacro %}
{% macro spark__ordered_list(value, order_by) -%}
    transform(array_sort(collect_list(named_struct('key', {{ order_by }}, 'value', {{ value }}))), entry -> entry.value)
{%- endmacro %}

{#- Two lists, one after the other. -#}
{% macro list_concat(first, second) -%}{{ return(adapter.dispatch('list_concat', 'caot')(first, second)) }}{%- endmacro %}
{% macro default__list_concat(first, second) -%}list_concat({{ first }}, {{ second }}){%- endmacro %}
{% macro spark__list_concat(first, second) -%}concat({{ first }}, {{ second }}){%- endmacro %}

{#- The text at `path` ('$.a.b') of the JSON text `json` (null when absent). -#}
{% macro json_text(json, path) -%}{{ return(adapter.dispatch('json_text', 'caot')(json, path)) }}{%- endmacro %}
{% macro default__json_text(json, path) -%}({{ json }} ->> '{{ path }}'){%- endmacro %}
{% macro spark__json_text(json, path) -%}get_json_object({{ json }}, '{{ path }}'){%- endmacro %}

{#- One row per element of the JSON list at `path` of `json`, its fields (a dict of name -> SQL type)
    as columns (a select-list item without alias). -#}
{% macro unnest_json_records(json, path, fields) -%}
    {{ return(adapter.dispatch('unnest_json_records', 'caot')(json, path, fields)) }}
{%- endmacro %}
{% macro default__unnest_json_records(json, path, fields) -%}
    unnest(from_json({{ json }} -> '{{ path }}', '[{ {%- for name, type in fields.items() -%}
        "{{ name }}": "{{ type | upper }}"{{ ', ' if not loop.last }}
    {%- endfor -%} }]'), recursive := true)
{%- endmacro %}
{% macro spark__unnest_json_records(json, path, fields) -%}
    inline(from_json(get_json_object({{ json }}, '{{ path }}'), 'array<struct<{%- for name, type in fields.items() -%}
        {{ name }}:{{ type }}{{ ',' if not loop.last }}
    {%- endfor -%}>>'))
{%- endmacro %}

{#- Rows of `relation` (a relation or CTE name) turned into one row per id and column of `columns`
    (SQL-standard UNPIVOT, which both engines read: null values give no row), each value cast to
    `value_type`, with the column's name in `name_column` and its value in `value_column`. -#}
{% macro unpivoted(relation, id_columns, columns, value_type, name_column='name', value_column='value') -%}
    (
        select *
        from (
            select
                {% for id in id_columns %}{{ id }}, {% endfor %}
                {%- for column in columns %}
                cast({{ column }} as {{ value_type }}) as {{ column }}{{ ',' if not loop.last }}
                {%- endfor %}
            from {{ relation }}
        ) as wide
        unpivot ({{ value_column }} for {{ name_column }} in ({{ columns | join(', ') }}))
    )
{%- endmacro %}

{#- `unpivoted` over every column of `relation` (a CTE reading `model`, a ref, with the same
    columns) but `id_columns` and `exclude`. DuckDB names them with `columns(* exclude ...)`; Spark
    has no such expression, so the columns are the built table's, listed when dbt compiles the
    model (after its parents are built). -#}
{% macro unpivoted_all_but(relation, model, id_columns, exclude, value_type, name_column, value_column) -%}
    {{ return(adapter.dispatch('unpivoted_all_but', 'caot')(
        relation, model, id_columns, exclude, value_type, name_column, value_column
    )) }}
{%- endmacro %}
{% macro default__unpivoted_all_but(relation, model, id_columns, exclude, value_type, name_column, value_column) -%}
    (
        unpivot (
            select
                {% for id in id_columns %}{{ id }}, {% endfor %}
                columns(* exclude ({{ (id_columns + exclude) | join(', ') }}))::{{ value_type }}
            from {{ relation }}
        )
        on columns(* exclude ({{ id_columns | join(', ') }}))
        into name {{ name_column }} value {{ value_column }}
    )
{%- endmacro %}
{% macro spark__unpivoted_all_but(relation, model, id_columns, exclude, value_type, name_column, value_column) -%}
    {%- set columns = [] -%}
    {%- if execute -%}
        {%- for column in adapter.get_columns_in_relation(model) -%}
            {%- if column.name | lower not in id_columns + exclude -%}
                {%- do columns.append(column.name | lower) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    {#- a table not built yet (dbt parse, a compile before the first build) has no columns: a
        name that says so, where the query would fail -#}
    {{ unpivoted(relation, id_columns, columns or [model.identifier ~ '_not_built'], value_type, name_column, value_column) }}
{%- endmacro %}

{#- A DECIMAL as text with exactly `scale` decimals (Spark writes 0 and |x| < 10^-6 at scale 7 as
    0E-7 and 5E-7). -#}
{% macro decimal_text(value, precision, scale) -%}
    {{ return(adapter.dispatch('decimal_text', 'caot')(value, precision, scale)) }}
{%- endmacro %}
{% macro default__decimal_text(value, precision, scale) -%}{{ value }}::decimal({{ precision }}, {{ scale }})::string{%- endmacro %}
{% macro spark__decimal_text(value, precision, scale) -%}
    replace(format_number(cast({{ value }} as decimal({{ precision }}, {{ scale }})), {{ scale }}), ',', '')
{%- endmacro %}
