-- One row per trust, Distribution Date and class: the state after the date (class balance and
-- unpaid interest, the Reserve Account, unpaid fees) and, in `amounts`, every amount of the date
-- (the class's and the trust's, and each step of the priority of payments), all in integer
-- cents. The rules are the macro distribution_waterfall (macros/distribution_waterfall.sql); the
-- marts fct_distribution_date, fct_note_distribution and fct_waterfall give them typed columns.
{{ distribution_waterfall(ref('int_waterfall__period_inputs'), ref('int_waterfall__opening_state')) }}
