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
