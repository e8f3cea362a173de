{#-
    The loan-level models that follow each receivable through its history (the Simple Interest
    fold keeps every receivable's transactions and states in memory while it recurses; the
    period balances carry state across a receivable's periods in windows over very wide rows)
    run in buckets of receivables, one after another, when there are many rows: each
    bucket then fits in memory. The model's own query builds bucket 0 and a post-hook appends
    the others with the same compiled query. There is one bucket per `rows_per_bucket` rows to
    recompute (dbt var, default 10 million), so a deal of the 2015-4 size runs in one. A
    receivable's bucket is a hash of its id; the bucket in work is a DuckDB variable, so the
    compiled SQL is the same for every bucket and, with no variable set, covers every receivable
    (tests/model_runner.py runs it that way). The variables belong to the model's connection.
-#}

{#- True for the receivables of the bucket being built. -#}
{% macro in_bucket(column='receivable_id') -%}
    hash({{ column }}) % coalesce(getvariable('receivable_buckets'), 1)::ubigint
    = coalesce(getvariable('receivable_bucket'), 0)::ubigint
{%- endmacro %}

{#- Model config of a bucketed incremental model: the rows of the model `rows_model` (from the
    first recomputed Collection Period on) size the buckets. -#}
{% macro bucketed_incremental_config(rows_model) -%}
    {{ loan_level_incremental_config(
        pre_hooks=[
            "{{ plan_buckets(ref('" ~ rows_model ~ "')) }}",
            "set variable receivable_bucket = 0"
        ],
        post_hooks=['{{ build_remaining_buckets() }}']
    ) }}
{%- endmacro %}

{#- Pre-hook: how many buckets the rows to recompute need. -#}
{% macro plan_buckets(rows) -%}
    set variable receivable_buckets = (
        select greatest(1, ceil(count(*) / {{ var('rows_per_bucket', 10000000) }}))::ubigint
        from {{ rows }}
        where collection_period >= {{ rebuild_from() }}
    )
{%- endmacro %}

{#- Post-hook: build and append buckets 1 .. n-1 with the model's own compiled query. -#}
{% macro build_remaining_buckets() -%}
    {%- if execute -%}
        {%- set buckets = run_query("select getvariable('receivable_buckets')").columns[0].values()[0] -%}
        {%- for bucket in range(1, buckets | int) -%}
            {%- do log(this.identifier ~ ": bucket " ~ (bucket + 1) ~ " of " ~ buckets, info=true) -%}
            {%- do run_query("set variable receivable_bucket = " ~ bucket) -%}
            {%- do run_query("insert into " ~ this ~ " by name " ~ model.compiled_code) -%}
        {%- endfor -%}
        {%- do run_query("reset variable receivable_bucket") -%}
        {%- do run_query("reset variable receivable_buckets") -%}
    {%- endif -%}
{%- endmacro %}
