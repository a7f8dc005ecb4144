"""Replica-acknowledged appends (``durability="replica"``): an ack waits until a replica has the
append (``WAIT``), so a master killed right after an ack loses nothing acknowledged; a replica
that does not confirm in time turns the ack into ``StoreUnavailable``, never a false ack.

Real servers only: a master and its replica (plain replication), and a local cluster of three
masters with one replica each whose masters are SIGKILLed one after the other."""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from events.embedded import EmbeddedServer
from events.errors import StoreUnavailable
from events.ledger import ledger_key
from events.localcluster import ClusterMaster, LocalCluster, LocalReplicaPair
from events.store import EventStore, NewEvent, events_key, meta_key

ROUNDS = 8
"""Master kills of the plain pair; each round writes, kills right after an ack, and checks."""


def _until(check: object, within: float = 20.0) -> None:
    deadline = time.monotonic() + within
    while True:
        try:
            if check():  # type: ignore[operator]
                return
        except (redis.RedisError, OSError):
            pass
        assert time.monotonic() < deadline, "the servers did not get there in time"
        time.sleep(0.05)


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[LocalReplicaPair]:
    with LocalReplicaPair(tmp_path) as running:
        yield running


def replica_client(pair: LocalReplicaPair) -> redis.Redis:
    assert pair.replica is not None
    return pair.replica.client()


async def append_until_killed(
    store: EventStore, game_id: str, kill: object, after: int, patience: float = 30.0
) -> list[int]:
    """Append one event at a time to ``game_id``; right after the ``after``-th ack, ``kill()``
    the master and go on until the store refuses. The versions acknowledged.

    Before the kill a refusal is a slow machine (a ``WAIT`` past its timeout while the suite
    loads both cores), not the fault under test: the same command is resent, which the store
    makes safe (a retried command id never applies twice), for up to ``patience`` seconds."""
    acked: list[int] = []
    version = 0
    deadline = time.monotonic() + patience
    command_id = uuid.uuid4().hex
    while True:
        try:
            result = await store.append(
                game_id, [NewEvent("e", {"n": version})], expected_version=version,
                command_id=command_id, actor=None, ts=0,
            )
        except StoreUnavailable:
            if len(acked) >= after or time.monotonic() > deadline:
                return acked
            await asyncio.sleep(0.1)
            continue
        acked.append(result.last_version)
        version = result.last_version
        command_id = uuid.uuid4().hex
        if len(acked) == after:
            kill()  # type: ignore[operator]


async def test_auto_durability_is_replica_where_every_master_has_one(pair: LocalReplicaPair) -> None:
    store = await EventStore.connect(pair.url, durability="auto")
    try:
        assert store.durability == "replica"
        result = await store.append("g", [NewEvent("e", {})], expected_version=0, command_id="c", actor=None, ts=0)
        assert result.last_version == 1
        assert replica_client(pair).xlen(events_key("g")) == 1, "acked: the replica has it"
    finally:
        await store.close()


async def test_a_master_killed_right_after_an_ack_loses_nothing_acknowledged(tmp_path: Path) -> None:
    for round_ in range(ROUNDS):
        pair = LocalReplicaPair(tmp_path / f"round-{round_}").start()
        assert pair.master is not None
        try:
            store = await EventStore.connect(pair.url, durability="replica", call_timeout=1.0)
            try:
                acked = await append_until_killed(store, "g", pair.master.process.kill, after=20 + round_)
            finally:
                await store.close()
            on_replica = replica_client(pair).xlen(events_key("g"))
            assert len(acked) >= 20 + round_
            assert on_replica >= acked[-1], f"round {round_}: acked {acked[-1]}, the replica has {on_replica}"
        finally:
            pair.stop()


@pytest.fixture
def alone(tmp_path: Path) -> Iterator[str]:
    """A server with no replica: its url."""
    with EmbeddedServer(tmp_path / "alone", fsync="everysec") as server:
        yield server.url


async def test_no_replica_in_time_is_store_unavailable_not_an_ack(alone: str) -> None:
    store = await EventStore.connect(alone, durability="replica", replica_timeout_ms=200)
    try:
        assert store.durability == "replica"
        started = time.monotonic()
        with pytest.raises(StoreUnavailable, match="NotReplicated"):
            await store.append("g", [NewEvent("e", {})], expected_version=0, command_id="c", actor=None, ts=0)
        assert time.monotonic() - started < 2.0
        # The append is on the master, unconfirmed: the resend is a duplicate, refused the same
        # way until a replica confirms it.
        with pytest.raises(StoreUnavailable):
            await store.append("g", [NewEvent("e", {})], expected_version=0, command_id="c", actor=None, ts=0)
    finally:
        await store.close()


async def test_local_durability_never_waits(alone: str) -> None:
    store = await EventStore.connect(alone, durability="auto")
    try:
        assert store.durability == "local"
        await store.append("g", [NewEvent("e", {})], expected_version=0, command_id="c", actor=None, ts=0)
    finally:
        await store.close()


@pytest.fixture
def replicated_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    cluster = LocalCluster(tmp_path / "cluster", masters=3, replicas=1, node_timeout_ms=1000).start()
    try:
        yield cluster
    finally:
        cluster.stop()


def _promoted(cluster: LocalCluster, replica: ClusterMaster) -> bool:
    with replica.client() as client:
        if client.info("replication").get("role") != "master":
            return False
        info = str(client.execute_command("CLUSTER", "INFO"))
        return "cluster_state:ok" in info


@pytest.mark.timeout(180)
async def test_every_acked_event_survives_each_master_killed_in_turn(replicated_cluster: LocalCluster) -> None:
    cluster = replicated_cluster
    store = await EventStore.connect(cluster.url, cluster=True, durability="auto", call_timeout=1.0)
    try:
        assert store.durability == "replica"
        for index, (master, replica) in enumerate(zip(list(cluster.masters), list(cluster.replicas))):
            game_id = _game_on(cluster, master, f"round{index}")
            _until(lambda replica=replica: LocalCluster.replicates(replica), within=30)
            acked = await append_until_killed(store, game_id, master.process.kill, after=15)
            assert len(acked) >= 15, f"master {index}: the store refused before the kill: nothing tested"
            master.process.kill()  # already killed after the 15th ack; again is harmless
            master.process.wait(timeout=30)
            _until(lambda replica=replica: _promoted(cluster, replica), within=30)
            with replica.client() as client:
                kept = client.xlen(events_key(game_id))
            assert kept >= acked[-1], f"master {index}: acked {acked[-1]}, the promoted replica has {kept}"
    finally:
        await store.close()


def _game_on(cluster: LocalCluster, master: ClusterMaster, prefix: str) -> str:
    """A game id whose stream lives on ``master``."""
    from redis.crc import key_slot

    for n in range(10_000):
        game_id = f"{prefix}-{n}"
        if cluster.master_of_slot(key_slot(events_key(game_id).encode())).port == master.port:
            return game_id
    raise AssertionError("no game id on that master")


async def test_the_resend_of_an_unconfirmed_append_is_confirmed_once_a_replica_has_it(pair: LocalReplicaPair) -> None:
    store = await EventStore.connect(pair.url, durability="replica", replica_timeout_ms=300)
    try:
        assert pair.replica is not None
        os.kill(pair.replica.process.pid, signal.SIGSTOP)  # the replica stops acknowledging
        try:
            with pytest.raises(StoreUnavailable):
                await store.append("g", [NewEvent("e", {})], expected_version=0, command_id="c", actor=None, ts=0)
        finally:
            os.kill(pair.replica.process.pid, signal.SIGCONT)
        await asyncio.sleep(0.2)
        again = await store.append("g", [NewEvent("e", {})], expected_version=0, command_id="c", actor=None, ts=0)
        assert again.duplicate and again.last_version == 1
        assert replica_client(pair).xlen(events_key("g")) == 1
    finally:
        await store.close()


async def test_what_a_node_acks_besides_appends_waits_for_a_replica_too(alone: str) -> None:
    """A game's creation, its metadata and its ledger entry are acknowledged writes as much as
    its events: at ``replica`` durability, with no replica to confirm them, each is refused."""
    store = await EventStore.connect(alone, durability="replica", replica_timeout_ms=200)
    try:
        with pytest.raises(StoreUnavailable, match="NotReplicated"):
            await store.create_game("g", {"game": "tictactoe"})
        with pytest.raises(StoreUnavailable, match="NotReplicated"):
            await store.update_meta("g", {"status": "finished"})
        with pytest.raises(StoreUnavailable, match="NotReplicated"):
            await store.ledger.record("g", {"game": "tictactoe", "created": 0})
    finally:
        await store.close()


async def test_a_replicated_creation_is_on_the_replica_when_acked(pair: LocalReplicaPair) -> None:
    store = await EventStore.connect(pair.url, durability="replica")
    try:
        await store.create_game("g", {"game": "tictactoe"})
        entry = await store.ledger.record("g", {"game": "tictactoe", "created": 0})
        replica = replica_client(pair)
        assert replica.exists(meta_key("g")), "the meta is on the replica"
        assert replica.xlen(ledger_key()) == entry.position == 1
    finally:
        await store.close()
