from decimal import Decimal

import pytest
import yaml

from dagster_project.deal import DEFAULT_DEAL_FILE, DealFileError, load_deal


def test_deal_terms_of_2015_4():
    deal = load_deal()
    assert deal.initial_pool_balance == Decimal("1050000018.44")
    assert deal.overcollateralization_target == Decimal("5250000.09")
    assert deal.initial_note_balance == Decimal("1050000000.00")  # Art. I "Initial Note Balance"
    assert [c.class_id for c in deal.classes] == [
        "A-1",
        "A-2a",
        "A-2b",
        "A-3",
        "A-4",
        "B",
        "C",
        "D",
    ]
    assert deal.required_reserve_amount == deal.initial_reserve_deposit == Decimal("2625000.05")
    assert deal.note_class("A-2b").spread == Decimal("0.0060")


def test_2014_4_note_rates_give_its_published_interest_lines():
    """The Monthly Servicer's Certificate of CarMax Auto Owner Trust 2014-4 for 2015-12-15
    (EX-99.1 of its 10-D): line 29e, A-2a Monthly Interest 81,790.88 on 146,491,136.88 (30/360);
    29i, A-2b 23,385.80 on 62,164,135.57 at LIBOR 0.19700% (line 15) plus the spread, 29 days
    (actual/360); 35a, D 47,120.00 on 18,600,000.00."""
    from decimal import ROUND_HALF_UP

    from dagster_project.deal import PROJECT_ROOT

    deal = load_deal(PROJECT_ROOT / "data" / "deals" / "caot_2014_4.yaml")
    cent = Decimal("0.01")

    def monthly(balance: str, rate: Decimal, fraction: Decimal) -> Decimal:
        return (Decimal(balance) * rate * fraction).quantize(cent, ROUND_HALF_UP)

    twelfth = Decimal(1) / 12
    assert monthly("146491136.88", deal.note_class("A-2a").rate, twelfth) == Decimal("81790.88")
    libor = Decimal("0.00197")
    floating = libor + deal.note_class("A-2b").spread
    assert monthly("62164135.57", floating, Decimal(29) / 360) == Decimal("23385.80")
    assert monthly("18600000.00", deal.note_class("D").rate, twelfth) == Decimal("47120.00")


def _write(tmp_path, mutate):
    raw = yaml.safe_load(DEFAULT_DEAL_FILE.read_text())
    mutate(raw)
    path = tmp_path / "deal.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_missing_term_is_named_with_the_file(tmp_path):
    path = _write(tmp_path, lambda raw: raw["reserve_account"].pop("required_amount"))
    with pytest.raises(
        DealFileError,
        match=r"deal.yaml: missing required field "
        r"'reserve_account.required_amount'",
    ):
        load_deal(path)


def test_float_money_is_refused(tmp_path):
    path = _write(tmp_path, lambda raw: raw["pool"].update(initial_pool_balance=1050000018.44))
    with pytest.raises(DealFileError, match="pool.initial_pool_balance"):
        load_deal(path)


def test_a_negative_receivable_count_names_the_field(tmp_path):
    path = _write(tmp_path, lambda raw: raw["pool"].update(initial_receivable_count=-1))
    with pytest.raises(DealFileError, match=r"'pool.initial_receivable_count' cannot be negative"):
        load_deal(path)


def test_bad_class_field_names_the_class(tmp_path):
    path = _write(tmp_path, lambda raw: raw["classes"][2].update(day_count="act/365"))
    with pytest.raises(DealFileError, match=r"classes\[2\].day_count"):
        load_deal(path)


def test_not_yaml(tmp_path):
    path = tmp_path / "deal.yaml"
    path.write_text("classes: [unclosed")
    with pytest.raises(DealFileError, match="not valid YAML"):
        load_deal(path)


def test_a_date_that_does_not_exist_names_the_field(tmp_path):
    path = tmp_path / "deal.yaml"
    path.write_text(
        DEFAULT_DEAL_FILE.read_text().replace("cutoff_date: 2015-09-30", "cutoff_date: 2015-09-31")
    )
    with pytest.raises(DealFileError, match=r"deal.yaml: field 'dates.cutoff_date' is not a date"):
        load_deal(path)


@pytest.mark.parametrize(
    "mutate, field, problem",
    [
        (lambda raw: raw["servicing"].update(servicing_rate="NaN"), "servicing.servicing_rate",
         "is not a decimal"),
        (lambda raw: raw["pool"].update(initial_pool_balance="Infinity"),
         "pool.initial_pool_balance", "is not a decimal"),
        (lambda raw: raw.update(calendar={"business_day_rule": "lunar"}),
         "calendar.business_day_rule", "must be one of"),
        (lambda raw: raw.update(deal_id=2015), "deal_id", "must be text"),
        (lambda raw: raw.update(deal_id="caot 2015|4"), "deal_id", "must be text"),
        (lambda raw: raw["eligibility"].update(level_payment_tolerance="-0.01"),
         "eligibility.level_payment_tolerance", "must be a non-negative amount"),
        (lambda raw: raw["eligibility"].update(min_original_term="abc"),
         "eligibility.min_original_term", "is not an integer"),
        (lambda raw: raw["eligibility"].update(max_apr="25%"), "eligibility.max_apr",
         "is not a decimal"),
        (lambda raw: raw["eligibility"].update(max_apr="25"), "eligibility.max_apr",
         "must be a fraction"),
        (lambda raw: raw["eligibility"].update(remaining_term_tolerance="-1"),
         "eligibility.remaining_term_tolerance", "cannot be negative"),
        (lambda raw: raw["eligibility"].update(originated_after="2009-13-01"),
         "eligibility.originated_after", "is not a date"),
    ],
)  # fmt: skip
def test_a_term_that_is_not_of_its_kind_names_the_field_when_read(tmp_path, mutate, field, problem):
    """Read when the deal file is, not when a step of the run needs the term."""
    with pytest.raises(DealFileError, match=rf"deal.yaml: field '{field}' {problem}"):
        load_deal(_write(tmp_path, mutate))


def test_eligibility_terms_are_read_typed():
    import datetime as dt

    terms = load_deal().eligibility
    assert terms["originated_after"] == dt.date(2009, 7, 26)
    assert (terms["min_original_term"], terms["max_apr"]) == (24, Decimal("0.2500"))


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda raw: raw["classes"][0].update(rate="-0.0042"), r"classes\[0\].rate"),
        (lambda raw: raw["servicing"].update(servicing_rate="-0.0100"), "servicing.servicing_rate"),
        (lambda raw: raw["classes"][1].update(rate="4.2"), r"classes\[1\].rate"),
        (lambda raw: raw["classes"][1].update(rate="0.50"), r"classes\[1\].rate"),
        (lambda raw: raw["servicing"].update(servicing_rate="0.50"), "servicing.servicing_rate"),
    ],
)
def test_a_rate_out_of_range_names_the_deal_field(tmp_path, mutate, field):
    """Not generic dbt test failures later: the deal file's field, when it is read."""
    path = _write(tmp_path, mutate)
    with pytest.raises(DealFileError, match=rf"deal.yaml: field '{field}' must be a fraction"):
        load_deal(path)


def test_a_deal_file_changed_since_its_certificates_holds_its_trust_until_accepted(
    built_warehouse, tmp_path
):
    """The deal terms asset on a copy of the built warehouse: a changed Note Rate is not
    applied silently. The trust is held: its terms loaded before stand, the check names the
    change and how to apply it, and the certificate gate withholds that trust's certificates
    with the reason while another trust's publish. A run whose tags accept the change
    (`--rebuild --accept-deal-changes`) applies it and lifts the hold."""
    import datetime as dt
    import shutil

    import dagster as dg
    import duckdb
    from conftest import DEAL_ID, copied_warehouse

    from dagster_project.deal import DEFAULT_DEALS_DIR
    from dagster_project.defs.ingestion import ACCEPT_DEAL_CHANGES, deal_terms
    from dagster_project.quality.runs import TAPE_STATUS, trust_holds
    from dagster_project.quality.store import PeriodStatus, certificate_gate
    from dagster_project.resources import WarehouseResource

    paths = copied_warehouse(built_warehouse, tmp_path)
    deals = tmp_path / "deals"
    shutil.copytree(DEFAULT_DEALS_DIR, deals)
    deal_file = deals / DEFAULT_DEAL_FILE.name
    deal_file.write_text(deal_file.read_text().replace('rate: "0.0109"', 'rate: "0.0119"', 1))
    warehouse = WarehouseResource(
        work_path=str(paths["work"]),
        published_path=str(paths["published"]),
        input_dir=str(paths["input"]),
        deals_dir=str(deals),
    )
    rate = "select rate from raw.deal_classes where deal_id = ? and class_id = 'A-2a'"

    held = dg.materialize([deal_terms], resources={"warehouse": warehouse})
    (check,) = held.get_asset_check_evaluations()
    assert check.check_name == "deal_files_accepted" and not check.passed
    assert check.metadata["deal_files_held"].value == DEAL_ID
    reason = check.metadata["reasons"].value
    assert "deal_classes: class A-2a changed" in reason and "--accept-deal-changes" in reason
    assert str(deal_file) in reason
    with duckdb.connect(str(paths["work"])) as con:
        assert con.execute(rate, [DEAL_ID]).fetchone()[0] == Decimal("0.0109")
        holds = trust_holds(con)
        assert list(holds) == [DEAL_ID] and "not applied" in holds[DEAL_ID][0]
        periods = [PeriodStatus(*row) for row in con.execute(TAPE_STATUS).fetchall()]
    another = [PeriodStatus("another-trust", "2016-01", dt.date(2016, 2, 16), True, False, None)]
    gate = certificate_gate(periods + another, {}, holds)
    assert {g.deal_id for g in gate if g.is_publishable} == {"another-trust"}
    assert all("not applied" in g.withheld_reason for g in gate if g.deal_id == DEAL_ID)

    accepted = dg.materialize(
        [deal_terms], resources={"warehouse": warehouse}, tags={ACCEPT_DEAL_CHANGES: "true"}
    )
    (check,) = accepted.get_asset_check_evaluations()
    assert check.passed
    with duckdb.connect(str(paths["work"])) as con:
        assert con.execute(rate, [DEAL_ID]).fetchone()[0] == Decimal("0.0119")
        assert trust_holds(con) == {}


def test_the_command_line_names_a_deal_file_it_cannot_read_without_a_traceback(
    tmp_path, monkeypatch, capsys
):
    """One misspelt field in one deal file of the shelf: the command line stops with status 2 and
    the file and field, before any run (the definitions read every deal file)."""
    import shutil

    import dagster as dg

    from dagster_project import pipeline
    from dagster_project.deal import DEFAULT_DEALS_DIR

    deals = tmp_path / "deals"
    shutil.copytree(DEFAULT_DEALS_DIR, deals)
    broken = deals / "caot_2014_4.yaml"
    broken.write_text(broken.read_text().replace("  servicing_rate:", "  servicng_rate:", 1))
    monkeypatch.setenv("CAOT_DEALS_DIR", str(deals))
    with dg.DagsterInstance.ephemeral() as instance:
        assert pipeline.main(["--period", "2016-01"], instance=instance) == 2
    error = capsys.readouterr().err
    assert f"{broken}: unknown field 'servicing.servicng_rate' (misspelt?)" in error
    assert "Traceback" not in error


def test_accepting_deal_changes_without_the_rebuild_is_refused(capsys):
    """A monthly run never applies a changed deal file: asked to, the command says so (status 2)
    instead of running with the change silently ignored."""
    from dagster_project import pipeline

    with pytest.raises(SystemExit) as stopped:
        pipeline.parse(["--accept-deal-changes"])
    assert stopped.value.code == 2
    assert "with --rebuild only" in capsys.readouterr().err
    assert pipeline.parse(["--rebuild", "--accept-deal-changes"]).accept_deal_changes
