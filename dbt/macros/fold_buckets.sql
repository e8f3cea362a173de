{#-
    The Simple Interest fold (int_receivable__simple_interest_steps) gathers each receivable's
    transactions into one list, and DuckDB cannot spill those lists to disk. So a large build
    folds the receivables in buckets, one after another, each holding only its own lists: the
    model's query folds bucket 0 and a post-hook appends the others with the same compiled query.
    There is one bucket per `fold_transactions_per_bucket` transactions to fold (dbt var, default
    10 million), so a deal of the 2015-4 size folds in one. A receivable's bucket is a hash of its
    id; the bucket in work is a DuckDB variable, so the compiled SQL is the same for every bucket
    (and, with no variable set, folds everything: tests/model_runner.py runs it that way).
-#}

{#- True for the receivables of the bucket being folded. -#}
{% macro in_fold_bucket(column='receivable_id') -%}
    hash({{ column }}) % coalesce(getvariable('fold_buckets'), 1)::ubigint
    = coalesce(getvariable('fold_bucket'), 0)::ubigint
{%- endmacro %}

{#- Pre-hooks: how many buckets the transactions to fold need; start with bucket 0. -#}
{% macro plan_fold_buckets(transactions) -%}
    set variable fold_buckets = (
        select greatest(1, ceil(count(*) / {{ var('fold_transactions_per_bucket', 10000000) }}))::ubigint
        from {{ transactions }}
        where collection_period >= {{ rebuild_from() }}
    )
{%- endmacro %}

{#- Post-hook: fold and append buckets 1 .. n-1 with the model's own compiled query. -#}
{% macro fold_remaining_buckets() -%}
    {%- if execute -%}
        {%- set buckets = run_query("select getvariable('fold_buckets')").columns[0].values()[0] -%}
        {%- for bucket in range(1, buckets | int) -%}
            {%- do log("folding bucket " ~ (bucket + 1) ~ " of " ~ buckets, info=true) -%}
            {%- do run_query("set variable fold_bucket = " ~ bucket) -%}
            {%- do run_query("insert into " ~ this ~ " by name " ~ model.compiled_code) -%}
        {%- endfor -%}
        {%- do run_query("reset variable fold_bucket") -%}
        {%- do run_query("reset variable fold_buckets") -%}
    {%- endif -%}
{%- endmacro %}
