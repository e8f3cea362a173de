-- One row per trust, Distribution Date and class: the state after the date (class balance and
-- unpaid interest, the Reserve Account, unpaid fees) and, in `amounts`, every amount of the date
-- (the class's and the trust's, and each step of the priority of payments), all in integer
-- cents. The rules are the macro distribution_waterfall (macros/distribution_waterfall.sql); the
-- marts fct_distribution_date, fct_note_distribution and fct_waterfall give them typed columns.
-- A recursive CTE on DuckDB, a fold of one insert per Distribution Date on Spark
-- (macros/period_fold.sql).
-- Incremental on DuckDB (macros/incremental.sql): a build with a window deletes each of its
-- trusts' dates from the window's first Collection Period on and computes them again from the
-- state after the last date kept (a trust with none kept: from its opening state); the other
-- trusts' dates are kept. A build without the window computes every date.
{{ fold_config() }}
-- depends_on: {{ ref('stg_deal__payment_calendar') }}

{%- set opening_state = ref('int_waterfall__opening_state') %}
{%- set kept_state = none %}
{%- if is_incremental() and var('rebuild_from', {}) %}
    {%- set kept_state -%}
        (
            select kept.*
            from {{ this }} as kept
            inner join (
                select deal_id, max(period_number) as last_period_number
                from {{ this }}
                where deal_id in (select deal_id from {{ window_starts() }})
                group by deal_id
            ) as last_kept
                on kept.deal_id = last_kept.deal_id and kept.period_number = last_kept.last_period_number
        )
    {%- endset %}
    {%- set opening_state -%}
        (
            select opening.*
            from {{ ref('int_waterfall__opening_state') }} as opening
            inner join {{ window_starts() }} on opening.deal_id = window_starts.deal_id
            where not exists (select 1 from {{ this }} as kept where kept.deal_id = opening.deal_id)
        )
    {%- endset %}
{%- endif %}

{{ distribution_waterfall(ref('int_waterfall__period_inputs'), opening_state, kept_state=kept_state) }}
