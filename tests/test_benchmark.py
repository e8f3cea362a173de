"""The benchmark's summary of a scale reads only that scale's stages."""

from bench.benchmark import (
    DBT_STAGE,
    FLOOR_STAGE,
    REFERENCE_STAGE,
    STARTUP_STAGE,
    WHOLE_STAGE,
    Stage,
    median_of,
    shelf_month,
    summarize,
)


def _scale(scale: str, seconds: dict[str, float], rss: dict[str, float]) -> list[Stage]:
    return [
        Stage(scale, stage, value, rss.get(stage, 0.0), 100) for stage, value in seconds.items()
    ]


def test_a_stage_not_run_at_the_larger_scale_gets_no_ratio_there():
    full = _scale(
        "full",
        {
            "generation": 18,
            "ingestion": 29,
            DBT_STAGE: 25,
            STARTUP_STAGE: 4,
            WHOLE_STAGE: 60,
            REFERENCE_STAGE: 90,
            FLOOR_STAGE: 9,
        },  # fmt: skip
        {"generation": 250, "ingestion": 1100, DBT_STAGE: 2400, REFERENCE_STAGE: 9000},
    )
    shelf = _scale(
        "shelf",
        {"generation": 336, "ingestion": 312, DBT_STAGE: 456, STARTUP_STAGE: 5, FLOOR_STAGE: 31},
        {"generation": 2500, "ingestion": 4400, DBT_STAGE: 4700},
    )
    at_full = summarize("full", 63_500, 100, full, [])
    assert at_full["reference_over_whole_pipeline"] == 1.5
    assert at_full["dbt_own_work_over_floor"] == round(21 / 9, 1)
    # the reference (9 GB) is what the pipeline is compared with, not part of it
    assert at_full["pipeline_peak_rss_mb"] == 2400
    at_shelf = summarize("shelf", 1_350_000, 100, full + shelf, [])
    assert at_shelf["reference_over_whole_pipeline"] is None  # not the full scale's 1.5
    assert at_shelf["pipeline_peak_rss_mb"] == 4700  # not the full scale's reference
    assert at_shelf["dbt_own_work_over_floor"] == round(451 / 31, 1)


def test_runs_of_a_stage_give_the_median_time_and_the_highest_peak():
    runs = [Stage("full", "one new month", seconds, rss, 35_000)
            for seconds, rss in ((9.8, 1300.0), (13.5, 1290.0), (9.2, 1310.5))]  # fmt: skip
    month = median_of(runs)
    assert (month.stage, month.seconds, month.peak_rss_mb, month.rows) == (
        "one new month", 9.8, 1310.5, 35_000,
    )  # fmt: skip
    assert month.note == "median of 3 runs: 9.8 s, 13.5 s, 9.2 s"
    # an even count: the mean of the two middle runs
    assert median_of(runs + [Stage("full", "one new month", 10.0, 1.0)]).seconds == 9.9


def test_a_shelf_s_month_is_the_latest_one_most_trusts_deliver():
    delivered = {
        "old": ["2018-08", "2018-09", "2018-10"],  # ended before the younger trusts' last months
        "mid": ["2018-09", "2018-10", "2018-11", "2018-12"],
        "young": ["2018-10", "2018-11", "2018-12", "2019-01"],
    }
    assert shelf_month(delivered) == "2018-10"  # all three, not 2018-12 (two)
    assert shelf_month({"one": ["2018-09", "2018-10"]}) == "2018-10"
