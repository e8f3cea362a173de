{#- Rows whose `columns` (e.g. deal_id and receivable_id) name no row of `to` (the same columns
    there): a relationships test on a composite key. -#}
{% test references(model, columns, to) %}
select child.*
from {{ model }} as child
where not exists (
    select 1 from {{ to }} as parent
    where {% for column in columns %}parent.{{ column }} = child.{{ column }}{{ ' and ' if not loop.last }}{% endfor %}
)
{% endtest %}
