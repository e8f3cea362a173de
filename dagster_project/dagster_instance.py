"""The Dagster instance of `dagster_home/dagster.yaml`: Dagster's SQLite storage, with the event
log's connections kept open.

Dagster's `SqliteEventLogStorage` creates a new engine and opens a new SQLite connection for every
event it stores (about five per event, between the run's own database and the cross-run index),
and SQLite syncs its write-ahead log to disk at every commit: about 14 ms an event. A monthly build
run stores about 300 events (each dbt test is three); loading 75 monthly tapes about 320.

`PooledSqliteEventLogStorage` keeps one engine, with its open connections, per database file of the
last few runs read or written, and syncs the write-ahead log at checkpoints instead of at every
commit (`synchronous=NORMAL`). In WAL mode that never corrupts a database; a power cut (not a crash
of the process) can lose the last events written. It stores the events Dagster sends as a batch
(a run's planned materializations, a partitioned step's materializations; Dagster's batch writing
is on for this instance) in one transaction per database file. The files, folders and schema are
Dagster's own, so an instance can switch between this and Dagster's default at any time.
"""

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager

import yaml
from dagster import DagsterInstance, EventLogEntry
from dagster._core.instance.ref import InstanceRef
from dagster._core.storage.event_log import SqliteEventLogStorage
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from dagster._core.storage.sqlite_storage import DagsterSqliteStorage
from dagster._serdes import ConfigurableClassData
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine

OPEN_DATABASES = 8  # a run's own database and the index, for the runs read or written lately
# Events Dagster sends as one batch are stored together up to this many (DAGSTER_EVENT_BATCH_SIZE,
# Dagster's own switch, still decides when set; 0 stores every event on its own): a run's planned
# materializations and checks (about 110 for a month's run, 150 for 75 tapes), the materializations
# of a step's partitions
EVENT_BATCH_SIZE = 1000


class WarehouseInstance(DagsterInstance):
    """Dagster's instance; by default its storage is `PooledSqliteStorage` under the instance's
    folder (a `storage:` entry in dagster.yaml still chooses another)."""

    @classmethod
    def config_schema(cls) -> dict:
        return {}

    def _get_event_batch_size(self) -> int:
        return int(os.getenv("DAGSTER_EVENT_BATCH_SIZE", EVENT_BATCH_SIZE))

    @staticmethod
    def config_defaults(base_dir: str):
        return {
            **InstanceRef.config_defaults(base_dir),
            "storage": ConfigurableClassData(
                __name__, "PooledSqliteStorage", yaml.dump({"base_dir": base_dir})
            ),
        }


class PooledSqliteStorage(DagsterSqliteStorage):
    """DagsterSqliteStorage (the same folders) with `PooledSqliteEventLogStorage`."""

    def __init__(self, base_dir: str, inst_data=None):
        super().__init__(base_dir, inst_data=inst_data)
        self._event_log_storage = PooledSqliteEventLogStorage(
            os.path.join(base_dir, "history", "runs")  # where DagsterSqliteStorage keeps them
        )

    @classmethod
    def from_config_value(cls, inst_data, config_value) -> "PooledSqliteStorage":
        return cls.from_local(inst_data=inst_data, **config_value)


def _sync_at_checkpoints(dbapi_connection, _record) -> None:
    """synchronous=NORMAL where the database is in WAL mode (Dagster creates them so)."""
    (mode,) = dbapi_connection.execute("pragma journal_mode").fetchone()
    if mode == "wal":
        dbapi_connection.execute("pragma synchronous = normal")


class PooledSqliteEventLogStorage(SqliteEventLogStorage):
    """SqliteEventLogStorage with an open engine per database file."""

    def __init__(self, base_dir: str, inst_data=None):
        self._engines: OrderedDict[str, Engine] = OrderedDict()
        self._schema_found: set[str] = set()  # tables and asset_keys columns of the index
        self._batch = threading.local()  # the connections store_event_batch holds open
        # a forked child (a process pool) must neither use nor close its parent's connections
        os.register_at_fork(after_in_child=self._engines.clear)
        super().__init__(base_dir, inst_data=inst_data)
        self._db_lock = threading.RLock()  # store_event_batch holds two databases at once

    def _engine(self, shard: str) -> Engine:
        """The open engine of a database file; beyond OPEN_DATABASES, the least recently used one
        is closed. Called under the storage's lock."""
        engine = self._engines.pop(shard, None)
        if engine is None:
            engine = create_engine(
                self.conn_string_for_shard(shard),
                connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS, "check_same_thread": False},
            )
            event.listen(engine, "connect", _sync_at_checkpoints)
        self._engines[shard] = engine
        while len(self._engines) > OPEN_DATABASES:
            _, oldest = self._engines.popitem(last=False)
            oldest.dispose()
        return engine

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        # as SqliteEventLogStorage._connect, but keeping the engine (the lock serializes threads)
        held = getattr(self._batch, "connections", {}).get(shard)
        if held is not None:  # inside store_event_batch: its transaction, committed at its end
            yield held
            return
        with self._db_lock:
            engine = self._engine(shard)
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn, conn.begin():
                yield conn

    def store_event_batch(self, events: Sequence[EventLogEntry]) -> None:
        """Events Dagster sends as one batch (a run's planned materializations and checks, a
        partitioned step's materializations; see EVENT_BATCH_SIZE) stored in one
        transaction per database file instead of two or three per event. If one fails, none is
        kept: Dagster then stores them one at a time."""
        shards = [INDEX_SHARD_NAME, *dict.fromkeys(event.run_id for event in events)]
        with ExitStack() as stack:
            held = {shard: stack.enter_context(self._connect(shard)) for shard in shards}
            self._batch.connections = held
            try:
                for entry in events:
                    self.store_event(entry)
            finally:
                self._batch.connections = {}

    # Dagster asks whether the index has a table or column (added by a schema migration) for every
    # asset or check event it stores, opening a new engine for each table it asks about: about
    # 0.6 s of a full-size run. Migrations add tables and columns and never drop them, so what
    # was found is remembered; what was not is asked again (a migration may add it meanwhile).
    def _found(self, name: str, ask: Callable[[], bool]) -> bool:
        if name not in self._schema_found and ask():
            self._schema_found.add(name)
        return name in self._schema_found

    def has_table(self, table_name: str) -> bool:
        ask = super().has_table
        return self._found(table_name, lambda: ask(table_name))

    def _has_asset_key_col_on_connection(self, conn: Connection, column_name: str) -> bool:
        ask = super()._has_asset_key_col_on_connection
        return self._found(f"asset_keys.{column_name}", lambda: ask(conn, column_name))

    def dispose(self) -> None:
        with self._db_lock:
            while self._engines:
                self._engines.popitem()[1].dispose()
        super().dispose()
