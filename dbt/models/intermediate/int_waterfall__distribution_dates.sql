-- One row per trust, Distribution Date and class: the state after the date (class balance and
-- unpaid interest, the Reserve Account, unpaid fees) and, in `amounts`, every amount of the date
-- (the class's and the trust's, and each step of the priority of payments), all in integer
-- cents. The rules are the macro distribution_waterfall (macros/distribution_waterfall.sql); the
-- marts fct_distribution_date, fct_note_distribution and fct_waterfall give them typed columns.
-- A recursive CTE on DuckDB, a fold of one insert per Distribution Date on Spark
-- (macros/period_fold.sql).
{{ config(materialized=fold_materialization()) }}

{{ distribution_waterfall(ref('int_waterfall__period_inputs'), ref('int_waterfall__opening_state')) }}
