{#-
    Incremental builds of the loan-level models. The Dagster asset that runs dbt decides, from
    raw.deliveries, the earliest Collection Period whose tapes changed since the last successful
    build (dagster_project/transformation/build_plan.py) and writes it to
    history.model_build_plan before `dbt build`. The loan-level models then delete and recompute
    only the rows of that period and later ones, starting each receivable from its state at the
    end of the period before. An empty plan means "everything": a bare `dbt build` on an existing
    warehouse recomputes every row, so it is never wrong, only slower.
    The plan is data, not a dbt var, so changing it does not invalidate dbt's partial parsing.
-#}

{#- First Collection Period to recompute ('' = all of them), as a scalar SQL expression. -#}
{% macro rebuild_from() -%}
    coalesce((select max(rebuild_from) from history.model_build_plan), '')
{%- endmacro %}

{#- The rows an incremental build recomputes (and its tests look at); null periods (a
    receivable's cutoff state) only when everything is recomputed. -#}
{% macro rebuilt_rows(column='collection_period') -%}
    coalesce({{ column }}, '') >= {{ rebuild_from() }}
{%- endmacro %}

{#- Model config shared by the loan-level incremental models: append the recomputed rows after a
    pre-hook deleted the stale ones; a model's own hooks run after that delete. -#}
{% macro loan_level_incremental_config(pre_hooks=[], post_hooks=[]) -%}
    {{ config(
        materialized='incremental',
        incremental_strategy='append',
        pre_hook=["{% if is_incremental() %}delete from {{ this }} where " ~ rebuilt_rows() ~ "{% endif %}"]
            + pre_hooks,
        post_hook=post_hooks
    ) }}
{%- endmacro %}
