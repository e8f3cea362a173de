"""The project's Dagster instance (dagster_home/dagster.yaml): Dagster's SQLite storage with the
event log's connections kept open. Same files as Dagster's default, faster to write."""

import os
import shutil

import dagster as dg
import pytest
from dagster._core.storage.sqlite_storage import DagsterSqliteStorage

from dagster_project import dagster_instance
from dagster_project.warehouse import PROJECT_ROOT


@dg.asset(check_specs=[dg.AssetCheckSpec("positive", asset="numbers")])
def numbers():
    yield dg.Output([1, 2, 3])
    yield dg.AssetCheckResult(check_name="positive", passed=True)


@pytest.fixture
def project_instance(tmp_path, monkeypatch):
    """An instance configured by the project's dagster.yaml, in its own folder, opened while
    DAGSTER_HOME points somewhere else (as the fault tests and benchmarks open theirs)."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copyfile(PROJECT_ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "elsewhere"))
    instance = dg.DagsterInstance.from_config(str(home))
    yield instance, home
    instance.dispose()


def test_the_project_instance_keeps_its_events_where_dagster_does_and_dagster_reads_them(
    project_instance,
):
    instance, home = project_instance
    assert isinstance(instance, dagster_instance.WarehouseInstance)
    assert isinstance(instance.event_log_storage, dagster_instance.PooledSqliteEventLogStorage)

    result = dg.materialize([numbers], instance=instance)
    assert result.success
    run_id = result.run_id
    assert (home / "history" / "runs" / f"{run_id}.db").exists()
    assert not (home.parent / "elsewhere").exists()

    written = instance.all_logs(run_id)
    default = DagsterSqliteStorage.from_local(str(home))  # Dagster's own classes, same folder
    try:
        read = default.event_log_storage.get_logs_for_run(run_id)
        assert [e.dagster_event_type for e in read] == [e.dagster_event_type for e in written]
        key, check_key = (
            dg.AssetKey("numbers"),
            dg.AssetCheckKey(dg.AssetKey("numbers"), "positive"),
        )
        events = default.event_log_storage
        assert events.get_latest_materialization_events([key])[key].run_id == run_id
        checks = events.get_latest_asset_check_execution_by_key([check_key])
        assert checks[check_key].run_id == run_id
    finally:
        default.dispose()


def test_connections_stay_open_sync_at_checkpoints_and_only_for_the_latest_databases(tmp_path):
    storage = dagster_instance.PooledSqliteEventLogStorage(str(tmp_path))
    try:
        with storage.index_connection() as conn:
            assert conn.exec_driver_sql("pragma journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("pragma synchronous").scalar() == 1  # NORMAL
        assert list(storage._engines) == ["index"]

        shards = [f"run{n}" for n in range(dagster_instance.OPEN_DATABASES + 3)]
        for shard in shards:
            with storage.run_connection(shard):
                pass
        assert list(storage._engines) == shards[-dagster_instance.OPEN_DATABASES :]
        with storage.run_connection(shards[-3]):  # used again: now the most recent
            pass
        assert list(storage._engines)[-1] == shards[-3]
    finally:
        storage.dispose()
    assert not storage._engines


def test_a_forked_child_does_not_inherit_the_open_connections(tmp_path):
    storage = dagster_instance.PooledSqliteEventLogStorage(str(tmp_path))
    try:
        with storage.index_connection():
            pass
        assert storage._engines
        pid = os.fork()
        if pid == 0:  # the child: no engine of the parent's, a new one of its own works
            status = 0 if not storage._engines else 1
            with storage.index_connection() as conn:
                status |= 0 if conn.exec_driver_sql("select 1").scalar() == 1 else 2
            os._exit(status)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        with storage.index_connection() as conn:  # the parent's still work
            assert conn.exec_driver_sql("select 1").scalar() == 1
    finally:
        storage.dispose()


def test_a_table_or_column_found_in_the_index_is_remembered_one_missing_is_asked_again(
    tmp_path, monkeypatch
):
    storage = dagster_instance.PooledSqliteEventLogStorage(str(tmp_path))
    asked = []
    parent = dagster_instance.SqliteEventLogStorage
    has_table, has_column = parent.has_table, parent._has_asset_key_col_on_connection
    monkeypatch.setattr(
        parent, "has_table", lambda self, name: asked.append(name) or has_table(self, name)
    )
    monkeypatch.setattr(
        parent,
        "_has_asset_key_col_on_connection",
        lambda self, conn, name: asked.append(name) or has_column(self, conn, name),
    )
    try:
        assert storage.supports_asset_checks and storage.supports_asset_checks
        assert storage.has_asset_key_index_cols() and storage.has_asset_key_index_cols()
        # the second answers were remembered
        assert asked == ["asset_check_executions", "last_materialization_timestamp"]
        assert not storage.has_table("added_by_a_later_migration")
        with storage.index_connection() as conn:
            conn.exec_driver_sql("create table added_by_a_later_migration (id integer)")
        assert storage.has_table("added_by_a_later_migration")  # asked again, found now
        assert asked.count("added_by_a_later_migration") == 2
    finally:
        storage.dispose()


DAYS = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-06")


@dg.multi_asset(  # a stretch of partitions in one run, as the pipeline loads the monthly tapes
    specs=[dg.AssetSpec("daily_numbers")],
    partitions_def=DAYS,
    backfill_policy=dg.BackfillPolicy.single_run(),
)
def daily_numbers() -> None:
    pass


def _tally(events) -> dict:
    counts = {}
    for entry in events:
        key = (
            entry.dagster_event_type,
            entry.dagster_event.partition if entry.dagster_event else None,
        )
        counts[key] = counts.get(key, 0) + 1
    return counts


def test_a_batch_of_events_is_stored_as_dagster_stores_them_one_by_one(
    project_instance, monkeypatch
):
    instance, home = project_instance
    storage = instance.event_log_storage
    batches = []
    store_batch = type(storage).store_event_batch
    monkeypatch.setattr(
        type(storage),
        "store_event_batch",
        lambda self, events: batches.append(len(events)) or store_batch(self, events),
    )
    backfill = {
        "dagster/asset_partition_range_start": "2026-01-01",
        "dagster/asset_partition_range_end": "2026-01-05",
    }
    batched = dg.materialize([daily_numbers], instance=instance, tags=backfill)
    # the run's five planned materializations, then the step's five materializations
    assert batched.success and batches == [5, 5]
    monkeypatch.setenv("DAGSTER_EVENT_BATCH_SIZE", "0")  # Dagster's switch: one event at a time
    single = dg.materialize([daily_numbers], instance=instance, tags=backfill)
    assert single.success and batches == [5, 5]

    default = DagsterSqliteStorage.from_local(str(home))  # Dagster's own classes read both back
    try:
        read = default.event_log_storage.get_logs_for_run
        assert _tally(read(batched.run_id)) == _tally(read(single.run_id))
        indexed = default.event_log_storage.get_event_records(  # the cross-run index
            dg.EventRecordsFilter(
                dg.DagsterEventType.ASSET_MATERIALIZATION, asset_key=dg.AssetKey("daily_numbers")
            )
        )
        partitions = sorted(record.partition_key for record in indexed)
        assert partitions == sorted(f"2026-01-0{day}" for day in range(1, 6) for _ in range(2))
    finally:
        default.dispose()


def test_a_batch_that_fails_keeps_none_of_its_events(project_instance, monkeypatch):
    instance, _ = project_instance
    result = dg.materialize([numbers], instance=instance)
    storage = instance.event_log_storage
    before = len(storage.get_logs_for_run(result.run_id))
    events = list(storage.get_logs_for_run(result.run_id))[:3]
    store_event = type(storage).store_event
    stored = []

    def fail_at_the_third(self, entry):
        if len(stored) == 2:
            raise RuntimeError("disk full")
        stored.append(entry)
        store_event(self, entry)

    monkeypatch.setattr(type(storage), "store_event", fail_at_the_third)
    with pytest.raises(RuntimeError, match="disk full"):
        storage.store_event_batch(events)
    assert len(stored) == 2
    assert len(storage.get_logs_for_run(result.run_id)) == before  # the first two rolled back
