-- One row per trust, Distribution Date and class: the state after the date (class balance and
-- unpaid interest, the Reserve Account, unpaid fees) and, in `amounts`, every amount of the date
-- (the class's and the trust's, and each step of the priority of payments), all in integer
-- cents, with the period inputs it was computed from. The rules are the macro
-- distribution_waterfall (macros/distribution_waterfall.sql); the marts fct_distribution_date,
-- fct_note_distribution and fct_waterfall give them typed columns.
-- A recursive CTE on DuckDB, a fold of one insert per Distribution Date on Spark
-- (macros/period_fold.sql).
-- Incremental on DuckDB: with a window (a monthly run) the pre-hook deletes each trust's
-- dates from the first one whose period inputs changed since it was computed (macros/
-- incremental.sql, delete_dates_to_recompute) and the build continues each trust from the state
-- after its last date kept (a trust with none: from its opening state); without one, every date
-- is computed.
{{ fold_config() }}

{%- set opening_state = ref('int_waterfall__opening_state') %}
{%- set kept_state = none %}
{%- if is_incremental() and rebuild_from() %}
    {%- set kept_state -%}
        (
            select kept.*
            from {{ this }} as kept
            inner join (
                select deal_id, max(period_number) as last_period_number
                from {{ this }}
                group by deal_id
            ) as last_kept
                on kept.deal_id = last_kept.deal_id and kept.period_number = last_kept.last_period_number
        )
    {%- endset %}
    {%- set opening_state -%}
        (
            select opening.*
            from {{ ref('int_waterfall__opening_state') }} as opening
            where not exists (select 1 from {{ this }} as kept where kept.deal_id = opening.deal_id)
        )
    {%- endset %}
{%- endif %}

{{ distribution_waterfall(ref('int_waterfall__period_inputs'), opening_state, kept_state=kept_state) }}
