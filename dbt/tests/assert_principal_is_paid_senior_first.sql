-- Indenture 2.8(d): no class is paid principal while a class ahead of it in the principal order
-- still has a balance after the distribution.
with notes as (
    select notes.*, classes.principal_order
    from {{ ref('fct_note_distribution') }} as notes
    inner join {{ ref('stg_deal__classes') }} as classes on notes.class_id = classes.class_id
)

select junior.distribution_date, junior.class_id, senior.class_id as senior_class_id
from notes as junior
inner join notes as senior
    on junior.distribution_date = senior.distribution_date
    and senior.principal_order < junior.principal_order
where junior.principal_paid_amount > 0 and senior.ending_balance > 0
